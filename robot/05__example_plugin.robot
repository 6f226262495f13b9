*** Settings ***
Documentation       The example third-party plugin, installed for real with pip into a folder
...                 of its own, is discovered through its entry point and used in queries.
Resource            resources/contextpipe.resource
Suite Setup         The Example Plugin Is Installed Next To An Indexed Project
Suite Teardown      Remove The Project Folder


*** Test Cases ***
The Installed Plugin Is Listed With Its Distribution And Version
    ${result}=    Run contextpipe    strategies    env:PYTHONPATH=${SITE}
    ${line}=    Line Of Output Containing    ${result.stdout}    path-match
    Should Contain    ${line}    contextpipe-example-plugin 0.1.0
    Should Match Regexp    ${line}    \\bok\\b
    ${rows}=    Strategies As JSON    env:PYTHONPATH=${SITE}
    ${row}=    Row For    ${rows}    path-match
    Should Be Equal    ${row}[strategy]    path-match
    Should Be Equal    ${row}[distribution]    contextpipe-example-plugin
    Should Be Equal    ${row}[version]    0.1.0
    Should Be Equal    ${row}[status]    ok
    Should Be Equal    ${row}[needs]    ${{ ["timeline"] }}

Its Strategy Is Explained
    ${result}=    Run contextpipe    explain    path-match    env:PYTHONPATH=${SITE}
    Should Contain    ${result.stdout}    path-match (contextpipe-example-plugin 0.1.0)
    Should Contain    ${result.stdout}    path contains a word of the query

Queries Use It And Cite It In The Provenance
    ${context}=    Query As JSON    how does the allocator split the budget?    400
    ...    env:PYTHONPATH=${SITE}
    ${report}=    Report For    ${context}    path-match
    Should Be Equal    ${report}[status]    ok
    Should Be True    ${report}[accepted] > 0
    Should Be True    ${context}[tokens_used] <= 400
    ${cited}=    Fragments Proposed By    ${context}    path-match
    Should Not Be Empty    ${cited}
    FOR    ${fragment}    IN    @{cited}
        Should Be Equal    ${fragment}[source][path]    docs/allocator.py
        ${vote}=    Vote Of    ${fragment}    path-match
        Should Be Equal    ${vote}[plugin]    contextpipe-example-plugin 0.1.0
        Should Contain    ${vote}[reason]    names allocator
    END

Its Options Come From config.toml
    [Documentation]    With only words of 20 letters or more to look for, it has nothing to do.
    A Config File With    [strategies.path-match.options]    min_word_length = 20
    ${context}=    Query As JSON    allocator budget    400    env:PYTHONPATH=${SITE}
    ${report}=    Report For    ${context}    path-match
    Should Be Equal    ${report}[status]    skipped
    Should Contain    ${report}[reason]    can_handle returned 0
    [Teardown]    No Config File

A Mistake In Its Options Names The File, Line And Key
    A Config File With    [strategies.path-match.options]    max_results = 0
    ${error}=    Run contextpipe And Expect Failure    query    allocator    env:PYTHONPATH=${SITE}
    Should Contain    ${error}    config.toml:2: strategies.path-match.options.max_results:
    [Teardown]    No Config File

Config Init Writes Its Options With Their Defaults
    Run contextpipe    config    init    env:PYTHONPATH=${SITE}
    ${text}=    Get File    ${PROJECT}/config.toml
    Should Contain    ${text}    [strategies.path-match.options]
    Should Contain    ${text}    min_word_length = 3
    Should Contain    ${text}    \# Shorter words are ignored.
    [Teardown]    No Config File

It Can Be Switched Off Without Uninstalling
    ${context}=    Query As JSON    allocator budget    400
    ...    env:PYTHONPATH=${SITE}    env:CONTEXTPIPE_DISABLE_PLUGINS=path-match
    FOR    ${fragment}    IN    @{context}[fragments]
        ${proposed_by}=    Strategies That Proposed    ${fragment}
        Should Not Contain    ${proposed_by}    path-match
    END

The Plugin's Own Tests Pass
    [Documentation]    The tests a plugin author copies along with the template.
    ${python}=    Evaluate    sys.executable    modules=sys
    ${result}=    Run Process    ${python}    -m    unittest    discover    -s    tests
    ...    cwd=${PROJECT}/plugin-source    env:PYTHONPATH=${SITE}    timeout=60s
    ...    on_timeout=kill    stderr=STDOUT
    Log    ${result.stdout}
    Should Be Equal As Integers    ${result.rc}    0    ${result.stdout}
    Should Match Regexp    ${result.stdout}    Ran \\d+ tests

Without The Plugin On The Path It Is Absent
    ${rows}=    Strategies As JSON
    Plugin Should Not Be Listed    ${rows}    path-match
    ${context}=    Query As JSON    allocator budget    400
    FOR    ${report}    IN    @{context}[strategies]
        Should Not Be Equal    ${report}[name]    path-match
    END


*** Keywords ***
The Example Plugin Is Installed Next To An Indexed Project
    A Project With The Example Documents Indexed
    # Build from a copy, so that the build leaves nothing in the repository.
    Copy Directory    ${EXAMPLE_PLUGIN}    ${PROJECT}/plugin-source
    Remove Directory    ${PROJECT}/plugin-source/build    recursive=True
    ${python}=    Evaluate    sys.executable    modules=sys
    ${result}=    Run Process    ${python}    -m    pip    install    --no-deps
    ...    --no-build-isolation    --no-cache-dir    --disable-pip-version-check    --quiet
    ...    --target    ${PROJECT}/site    ${PROJECT}/plugin-source
    ...    cwd=${PROJECT}    timeout=120s    on_timeout=kill    stderr=STDOUT
    Log    ${result.stdout}
    ${errors}=    Evaluate
    ...    " | ".join(line.strip() for line in $result.stdout.splitlines() if "error" in line)
    Should Be Equal As Integers    ${result.rc}    0
    ...    pip install of the example plugin failed (see the log): ${errors}    values=False
    Set Suite Variable    ${SITE}    ${PROJECT}/site

Fragments Proposed By
    [Arguments]    ${context}    ${strategy}
    ${fragments}=    Create List
    FOR    ${fragment}    IN    @{context}[fragments]
        ${proposed_by}=    Strategies That Proposed    ${fragment}
        IF    $strategy in $proposed_by    Append To List    ${fragments}    ${fragment}
    END
    RETURN    ${fragments}

Vote Of
    [Documentation]    The provenance entry of STRATEGY in one fragment.
    [Arguments]    ${fragment}    ${strategy}
    FOR    ${vote}    IN    @{fragment}[provenance]
        IF    $vote["strategy"] == $strategy    RETURN    ${vote}
    END
    Fail    ${strategy} did not propose ${fragment}[id]
