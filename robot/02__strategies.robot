*** Settings ***
Documentation       `contextpipe strategies` lists every strategy with the plugin that
...                 registered it; `contextpipe explain` says what each one does.
Resource            resources/contextpipe.resource
Suite Setup         A Fresh Project Folder
Suite Teardown      Remove The Project Folder


*** Test Cases ***
The Built-in Strategy Is Listed With Its Distribution And Status
    ${result}=    Run contextpipe    strategies
    ${line}=    Line Of Output Containing    ${result.stdout}    simple-keyword
    Should Match Regexp    ${line}    contextpipe \\d+\\.\\d+
    Should Match Regexp    ${line}    \\bok\\b
    Should Contain    ${line}    text
    Should Match Regexp    ${line}    \\b\\d+ ms\\b

The List Is Also Available As JSON
    ${rows}=    Strategies As JSON
    ${row}=    Row For    ${rows}    simple-keyword
    Should Be Equal    ${row}[strategy]    simple-keyword
    Should Be Equal    ${row}[distribution]    contextpipe
    Should Match Regexp    ${row}[version]    ^\\d+\\.\\d+
    Should Be Equal    ${row}[status]    ok
    Should Be Equal As Numbers    ${row}[quality]    0.3
    Should Be Equal    ${row}[needs]    ${{ ["text"] }}
    Should Be Empty    ${row}[error]
    Should Be True    ${row}[load_ms] >= 0

Explain Says What A Strategy Does
    ${result}=    Run contextpipe    explain    simple-keyword
    Should Contain    ${result.stdout}    simple-keyword (contextpipe
    Should Contain    ${result.stdout}    needs: text
    Should Contain    ${result.stdout}    max_results

Explaining An Unknown Strategy Names The Known Ones
    ${error}=    Run contextpipe And Expect Failure    explain    no-such-strategy
    Should Contain    ${error}    unknown strategy 'no-such-strategy'
    Should Contain    ${error}    simple-keyword

A Strategy Disabled In Config Is Skipped With A Reason
    The Example Documents Are In docs/
    Run contextpipe    index    docs/
    A Config File With    [strategies.simple-keyword]    enabled = false
    ${context}=    Query As JSON    budget    300
    ${report}=    Report For    ${context}    simple-keyword
    Should Be Equal    ${report}[status]    skipped
    Should Contain    ${report}[reason]    disabled
    FOR    ${fragment}    IN    @{context}[fragments]
        ${proposed_by}=    Strategies That Proposed    ${fragment}
        Should Not Contain    ${proposed_by}    simple-keyword
    END
    [Teardown]    No Config File

Asking For An Unknown Strategy Is A Clear Error
    ${error}=    Run contextpipe And Expect Failure    query    budget    --strategy    nope
    Should Contain    ${error}    unknown strategy 'nope'
