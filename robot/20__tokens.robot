*** Settings ***
Documentation       Who may ask the service what, tried as two users of one service would: each
...                 has a token (`contextpipe token create`) and calls it over HTTP, MCP over HTTP
...                 and gRPC. Neither ever sees the other's memory, nor anything that counts it;
...                 a request may narrow its token's scope, never widen it; what changes every
...                 request is refused to a token; a revoked token stops at once; and only with
...                 tokens may the service bind an address other than the usual loopback names.
Library             resources/Grpc.py
Library             resources/Mcp.py
Library             resources/Service.py
Resource            resources/contextpipe.resource
Suite Setup         Two Users With Tokens And A Running Service
Suite Teardown      Run Keywords    The Service Is Stopped    AND    Remove The Project Folder


*** Variables ***
${ASK}          kappa budget tokens
${CHAT}         {"model": "gpt-4o", "budget": 800, "request_id": "r-1", "messages": [{"role": "user", "content": "kappa budget tokens"}]}
${TURNS}        [{"role": "user", "content": "kappa budget tokens"}]


*** Test Cases ***
Without A Known Token The API Answers 401; Health, Readiness And The Schema Stay Open
    ${none}=    Call The Service    POST    /v1/assemble    {"query": "${ASK}", "budget": 300}
    Should Be Equal As Integers    ${none.status_code}    401
    Should Be Equal    ${none.headers}[www-authenticate]    Bearer
    ${wrong}=    Call The Service    POST    /v1/assemble    {"query": "${ASK}", "budget": 300}
    ...    token=cp_not-a-token
    Should Be Equal As Integers    ${wrong.status_code}    401
    FOR    ${path}    IN    /healthz    /readyz    /openapi.json    /metrics
        ${open}=    Call The Service    GET    ${path}
        Should Be Equal As Integers    ${open.status_code}    200    ${path}
    END
    ${grpc}=    Assemble Context    ${TURNS}    model=gpt-4o
    Should Be Equal    ${grpc}[code]    UNAUTHENTICATED
    ${client}=    A Client
    Run Keyword And Expect Error    *401*    Call Method    ${client}    assemble    ${ASK}
    Call Method    ${client}    close

Neither User Sees The Other's Memory, Or Its Count, By Any Endpoint
    ${before}=    What Bob Is Served
    ${kept}=    Call The Service    POST    /v1/memory
    ...    {"text": "The kappa budget is 777 tokens", "id": "k1"}    token=${ALICE}
    Should Be Equal As Integers    ${kept.status_code}    201
    Should Be Equal    ${kept.json()}[owner]    alice
    ${after}=    What Bob Is Served
    FOR    ${face}    IN    http    chat    mcp    grpc
        Should Be Equal    ${after}[${face}]    ${before}[${face}]    bob's ${face} answer changed
    END
    Should Not Contain    ${{ json.dumps($after) }}    777
    Should Not Contain    ${{ json.dumps($after) }}    memory/user/alice
    ${mine}=    Call The Service    POST    /v1/assemble    {"query": "${ASK}", "budget": 800}
    ...    token=${ALICE}
    Should Contain    ${mine.json()}[text]    The kappa budget is 777 tokens
    ${theirs}=    Call The Service    POST    /v1/memory
    ...    {"text": "The kappa budget of bob is 555 tokens", "id": "k2"}    token=${BOB}
    ${alice}=    Call The Service    POST    /v1/assemble    {"query": "${ASK}", "budget": 800}
    ...    token=${ALICE}
    Should Not Contain    ${alice.json()}[text]    555
    ${ids}=    Evaluate    [row["uko_uri"] for row in $alice.json()["fragments"] + $alice.json()["dropped"]]
    Should Not Contain Match    ${ids}    *memory/user/bob*
    ${client}=    A Client    token=${BOB}
    ${remote}=    Call Method    ${client}    assemble    ${ASK}    budget=${800}
    Should Contain    ${remote.text}    555 tokens
    Should Not Contain    ${remote.text}    777
    Call Method    ${client}    close
    [Teardown]    Forget As Their Owners

A Request May Narrow Its Token's Scope, Never Widen It
    ${widened}=    Call The Service    POST    /v1/assemble
    ...    {"query": "${ASK}", "budget": 300, "user": "alice"}    token=${BOB}
    Should Be Equal As Integers    ${widened.status_code}    403
    Should Be Equal    ${widened.json()}[detail]    this token speaks for user 'bob', not 'alice'
    ${other}=    Call The Service    POST    /v1/chat/assemble
    ...    {"model": "gpt-4o", "budget": 300, "session": "s-2", "messages": ${TURNS}}    token=${CAROL}
    Should Be Equal As Integers    ${other.status_code}    403
    Should Contain    ${other.json()}[detail]    session 's-1'
    ${narrowed}=    Call The Service    POST    /v1/memory
    ...    {"text": "carol's session note", "session": "s-1", "id": "c1"}    token=${CAROL}
    Should Be Equal    ${{ ($narrowed.json()["scope"], $narrowed.json()["owner"]) }}    ${{ ("session", "s-1") }}
    ${mcp}=    Bob's MCP Call    get_context    query=${ASK}    user=alice
    Should Be True    ${mcp}[error]
    Should Contain    ${mcp}[text]    not 'alice'
    ${grpc}=    Assemble Context    ${TURNS}    token=${BOB}    model=gpt-4o    agent_id=alice
    ...    budget=${300}
    Should Be Equal    ${grpc}[code]    PERMISSION_DENIED
    [Teardown]    Call The Service    DELETE    /v1/memory/c1?session=s-1    token=${CAROL}

What Changes Every Request Is Refused To A Token
    ${pin}=    Call The Service    POST    /v1/pins    {"target": "docs/notes.txt"}    token=${BOB}
    Should Be Equal As Integers    ${pin.status_code}    403
    ${index}=    Call The Service    POST    /v1/index    {"root": "docs"}    token=${BOB}
    Should Be Equal As Integers    ${index.status_code}    403
    ${forget}=    Call The Service    DELETE    /v1/memory?global=true    token=${BOB}
    Should Be Equal As Integers    ${forget.status_code}    403
    ${mcp}=    Bob's MCP Call    forget    everything_global=${True}
    Should Be True    ${mcp}[error]
    ${statistics}=    Run contextpipe    forget-memory    --global
    Should Contain    ${statistics.stdout}    forgot 0 memory items

A Revoked Token Stops Working At Once
    ${made}=    Run contextpipe    token    create    --user    dave
    ${dave}=    Set Variable    ${made.stdout.strip()}
    ${served}=    Call The Service    POST    /v1/assemble    {"query": "${ASK}", "budget": 300}
    ...    token=${dave}
    Should Be Equal As Integers    ${served.status_code}    200
    ${listed}=    Run contextpipe    token    list    --format    json
    ${id}=    Evaluate    [row["id"] for row in json.loads($listed.stdout) if row["user"] == "dave"][0]
    Should Not Contain    ${listed.stdout}    ${dave}
    Run contextpipe    token    revoke    ${id}
    ${refused}=    Call The Service    POST    /v1/assemble    {"query": "${ASK}", "budget": 300}
    ...    token=${dave}
    Should Be Equal As Integers    ${refused.status_code}    401
    ${again}=    Run contextpipe And Expect Failure    token    revoke    ${id}
    Should Contain    ${again}    no token '${id}'

Only With Tokens May The Service Bind Another Address
    [Documentation]    127.0.0.2 is loopback on this machine but not one of the names the
    ...    service takes for loopback, so it stands for any other address without exposing
    ...    the test's service beyond the machine.
    ${folder}=    Evaluate    tempfile.mkdtemp(prefix="contextpipe-robot-")    modules=tempfile
    Copy Directory    ${FIXTURES}/docs    ${folder}/docs
    ${indexed}=    Run Process    contextpipe    index    docs/    cwd=${folder}
    Should Be Equal As Integers    ${indexed.rc}    0    ${indexed.stderr}
    ${refused}=    Run Process    contextpipe    serve    --host    127.0.0.2    --port    0
    ...    cwd=${folder}    timeout=60s    on_timeout=kill
    Should Not Be Equal As Integers    ${refused.rc}    0
    Should Contain    ${refused.stderr}    contextpipe token create --user
    ${url}=    Start The Service    ${PROJECT}    --host    127.0.0.2
    Should Start With    ${url}    http://127.0.0.2:
    Wait Until Ready
    ${none}=    Call The Service    POST    /v1/assemble    {"query": "${ASK}", "budget": 300}
    Should Be Equal As Integers    ${none.status_code}    401
    [Teardown]    Run Keywords    Remove Directory    ${folder}    recursive=True
    ...    AND    The Service Is Stopped    AND    The Service Is Started With gRPC


*** Keywords ***
Two Users With Tokens And A Running Service
    A Project With The Example Documents Indexed
    FOR    ${name}    ${args}    IN
    ...    ALICE    --user alice
    ...    BOB    --user bob
    ...    CAROL    --user carol --session s-1
        ${made}=    Run contextpipe    token    create    @{{ $args.split() }}
        Set Suite Variable    ${${name}}    ${made.stdout.strip()}
    END
    The Service Is Started With gRPC

The Service Is Started With gRPC
    Start The Service    ${PROJECT}    --grpc-port    0
    Wait Until Ready
    ${said}=    Service Output
    Grpc Address Of    ${said}

The Service Is Stopped
    ${status}=    Stop The Service
    ${said}=    Service Output
    Should Be Equal As Integers    ${status}    0    the service exited ${status}: ${said}

What Bob Is Served
    [Documentation]    Everything bob's requests show of what was found: by HTTP the text,
    ...    the fragments and the dropped list; the chat messages and metadata (counts of what
    ...    was available included); MCP's result and manifest; gRPC's messages and metadata.
    ${assembled}=    Call The Service    POST    /v1/assemble    {"query": "${ASK}", "budget": 800}
    ...    token=${BOB}
    Should Be Equal As Integers    ${assembled.status_code}    200
    ${body}=    Set Variable    ${assembled.json()}
    ${seen}=    Evaluate    [$body["text"], $body["fragments"], $body["dropped"]]
    ${chat}=    Call The Service    POST    /v1/chat/assemble    ${CHAT}    token=${BOB}
    Should Be Equal As Integers    ${chat.status_code}    200
    ${told}=    Set Variable    ${chat.json()}
    # All but how long it took.
    ${chat}=    Evaluate    [$told["messages"], dict($told["metadata"], elapsed_ms=None)]
    ${mcp}=    Bob's MCP Call    get_context    query=${ASK}    budget=${800}
    Should Not Be True    ${mcp}[error]
    ${grpc}=    Assemble Context    ${TURNS}    token=${BOB}    model=gpt-4o    request_id=r-1
    ...    budget=${800}
    Should Be Equal    ${grpc}[metadata][fallback_reason]    ${EMPTY}
    RETURN    ${{ {"http": $seen, "chat": $chat, "mcp": $mcp, "grpc": $grpc} }}

Bob's MCP Call
    [Arguments]    ${tool}    &{arguments}
    ${url}=    Service Url
    Talk MCP Over HTTP At    ${url}    token=${BOB}
    ${result}=    Call The Tool    ${tool}    &{arguments}
    RETURN    ${result}

Forget As Their Owners
    Call The Service    DELETE    /v1/memory/k1    token=${ALICE}
    Call The Service    DELETE    /v1/memory/k2    token=${BOB}
