*** Settings ***
Documentation       MCP as an agent host speaks it, with the official SDK's client: over stdio
...                 (`contextpipe mcp`, started by the client) and over streamable HTTP (`/mcp` of
...                 `contextpipe serve`). Three tools whose definitions cost under 1,000 tokens;
...                 a result never larger than the budget the call gives, text once and a small
...                 manifest; a cursor for more; memory kept and forgotten per session.
Library             resources/Mcp.py
Library             resources/Service.py
Resource            resources/contextpipe.resource
Suite Setup         A Project With The Example Documents Indexed
Suite Teardown      Remove The Project Folder


*** Variables ***
${QUESTION}     how is the token budget split between strategies?


*** Test Cases ***
Over Stdio: Three Tools, Annotated, Under 1,000 Tokens Of Definitions
    Talk MCP Over Stdio In    ${PROJECT}
    Three Annotated Tools Under 1,000 Tokens

Over Stdio: A Result Never Exceeds Its Budget, And A Cursor Gives What Did Not Fit
    Talk MCP Over Stdio In    ${PROJECT}
    Results Fit Their Budgets And Pages Do Not Repeat

Over Stdio: Memory Is Kept For One Session And Forgotten
    Talk MCP Over Stdio In    ${PROJECT}
    A Session's Memory Is Kept, Seen By It Alone, And Forgotten

Over Stdio: A Call The Pipeline Refuses Is A Tool Error Of One Line
    Talk MCP Over Stdio In    ${PROJECT}
    ${bad}=    Call The Tool    get_context    query=budget    cursor=not-a-cursor
    Should Be True    ${bad}[error]
    Should Be Equal    ${bad}[text]    cursor: not one a get_context result gave
    ${negative}=    Call The Tool    get_context    query=budget    budget=${-5}
    Should Be True    ${negative}[error]
    Should Contain    ${negative}[text]    budget

Over HTTP: The Same Tools And Results At /mcp Of The Service
    [Setup]    Start The Service And Talk MCP To It
    Three Annotated Tools Under 1,000 Tokens
    Results Fit Their Budgets And Pages Do Not Repeat
    A Session's Memory Is Kept, Seen By It Alone, And Forgotten
    [Teardown]    The Service Is Stopped

Over HTTP: A Request Naming Another Host Is Refused (DNS Rebinding)
    [Setup]    Start The Service And Talk MCP To It
    ${status}=    Post To MCP With Host    attacker.example:80
    Should Be Equal As Integers    ${status}    421
    [Teardown]    The Service Is Stopped


*** Keywords ***
Start The Service And Talk MCP To It
    ${url}=    Start The Service    ${PROJECT}
    Wait Until Ready
    Talk MCP Over HTTP At    ${url}

The Service Is Stopped
    ${status}=    Stop The Service
    ${said}=    Service Output
    Should Be Equal As Integers    ${status}    0    the service exited ${status}: ${said}

Three Annotated Tools Under 1,000 Tokens
    ${tools}=    The Tools
    ${names}=    Evaluate    sorted(t["name"] for t in $tools)
    Should Be Equal    ${names}    ${{ ["forget", "get_context", "remember"] }}
    ${hints}=    Evaluate    {t["name"]: (t["annotations"]["readOnlyHint"], t["annotations"]["idempotentHint"], t["annotations"]["destructiveHint"]) for t in $tools}
    Should Be Equal    ${hints}
    ...    ${{ {"get_context": (True, True, False), "remember": (False, True, False), "forget": (False, True, True)} }}
    ${tokens}=    Tokens Of    ${tools}
    Should Be True    ${tokens} < 1000    the tool definitions take ${tokens} tokens
    Log    tool definitions: ${tokens} tokens (o200k_base)

Results Fit Their Budgets And Pages Do Not Repeat
    FOR    ${budget}    IN    ${150}    ${300}    ${400}    ${800}    ${1500}
        ${found}=    Call The Tool    get_context    query=${QUESTION}    budget=${budget}
        Should Not Be True    ${found}[error]    ${found}[text]
        ${total}=    Evaluate    $found["text_tokens"] + $found["structured_tokens"]
        Should Be True    0 < ${found}[text_tokens] and ${total} <= ${budget}
        ...    budget ${budget}: ${found}[text_tokens] tokens of text and ${found}[structured_tokens] of manifest
        Should Be Equal As Integers    ${found}[structured][tokens]    ${found}[text_tokens]
        ${kinds}=    Evaluate    set($found["structured"]["left_out"]) - {"budget", "duplicate", "rejected"}
        Should Be Empty    ${kinds}
    END
    ${pages}=    Pages Of Context    ${QUESTION}    150    3
    ${count}=    Get Length    ${pages}
    Should Be True    ${count} >= 2    the first page gave no cursor: ${pages}[0][structured]
    ${ids}=    Evaluate    [i for page in $pages for i in page["structured"]["ids"]]
    Should Not Be Empty    ${ids}
    ${distinct}=    Evaluate    len(set($ids)) == len($ids)
    Should Be True    ${distinct}    a page repeated what an earlier one gave: ${ids}

A Session's Memory Is Kept, Seen By It Alone, And Forgotten
    ${kept}=    Call The Tool    remember    text=The delta allocator budget is 640 tokens
    ...    id=d1    session=delta
    Should Be Equal    ${kept}[text]    kept d1 (session memory)
    ${mine}=    Call The Tool    get_context    query=delta allocator budget    budget=${800}
    ...    session=delta
    Should Contain    ${mine}[text]    The delta allocator budget is 640 tokens
    ${theirs}=    Call The Tool    get_context    query=delta allocator budget    budget=${800}
    ...    session=epsilon
    Should Not Contain    ${theirs}[text]    640 tokens
    ${gone}=    Call The Tool    forget    id=d1    session=delta
    Should Be Equal    ${gone}[text]    forgot 1 memory items
    ${after}=    Call The Tool    get_context    query=delta allocator budget    budget=${800}
    ...    session=delta
    Should Not Contain    ${after}[text]    640 tokens
