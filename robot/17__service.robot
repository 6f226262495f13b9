*** Settings ***
Documentation       The service as another process uses it: `contextpipe serve` started for real,
...                 called over HTTP. It answers what the command line answers, keeps and forgets
...                 memory per session, says what to fix in one line, refuses work beyond its
...                 queue with 503 and Retry-After at once, binds loopback only, and on SIGTERM
...                 finishes the request in flight before it exits 0.
Library             resources/Service.py
Resource            resources/contextpipe.resource
Suite Setup         A Project With The Example Documents Indexed
Suite Teardown      Remove The Project Folder


*** Variables ***
${QUESTION}     how is the token budget split between strategies?


*** Test Cases ***
The Service Answers A Request As The Command Line Does
    [Setup]    The Service Is Started And Ready
    ${answer}=    Call The Service    POST    /v1/assemble
    ...    {"query": "${QUESTION}", "budget": 600, "output": "json"}
    Should Be Equal As Integers    ${answer.status_code}    200
    ${served}=    Set Variable    ${answer.json()}
    ${local}=    Query As JSON    ${QUESTION}    600
    Should Be Equal    ${served}[text]    ${local}[text]
    ${ids}=    Evaluate    [f["id"] for f in $served["fragments"]]
    ${expected}=    Evaluate    [f["id"] for f in $local["fragments"]]
    Should Be Equal    ${ids}    ${expected}
    Should Not Be Empty    ${ids}
    [Teardown]    The Service Is Stopped

Health, Readiness, The Strategies And The Schema Are Published
    [Setup]    The Service Is Started And Ready
    ${alive}=    Call The Service    GET    /healthz
    Should Be Equal    ${alive.json()}    ${{ {"status": "alive"} }}
    ${ready}=    Call The Service    GET    /readyz
    Should Be Equal    ${ready.json()}    ${{ {"status": "ready"} }}
    ${listed}=    Call The Service    GET    /v1/strategies
    ${names}=    Evaluate    sorted(row["strategy"] for row in $listed.json())
    Should Be Equal    ${names}    ${{ ["breadth-depth-navigator", "recency", "relevance", "semantic-embedding", "simple-keyword", "tiered"] }}
    ${schema}=    Call The Service    GET    /openapi.json
    ${paths}=    Evaluate    sorted($schema.json()["paths"])
    Should Be Equal    ${paths}    ${{ ["/healthz", "/metrics", "/readyz", "/v1/assemble", "/v1/chat/assemble", "/v1/graph/node", "/v1/index", "/v1/jobs/{job_id}", "/v1/memory", "/v1/memory/{item_id}", "/v1/optimize", "/v1/pins", "/v1/strategies"] }}
    [Teardown]    The Service Is Stopped

A Session's Memory Is Kept, Seen Only By That Session, And Forgotten
    [Setup]    The Service Is Started And Ready
    ${kept}=    Call The Service    POST    /v1/memory
    ...    {"text": "The allocator budget for alpha is 900 tokens", "session": "alpha", "id": "a1"}
    Should Be Equal As Integers    ${kept.status_code}    201
    ${body}=    Set Variable    ${kept.json()}
    ${item}=    Evaluate    {k: v for k, v in $body.items() if k in ("id", "text", "scope", "owner")}
    Should Be Equal    ${item}
    ...    ${{ {"id": "a1", "text": "The allocator budget for alpha is 900 tokens", "scope": "session", "owner": "alpha"} }}
    ${alpha}=    Memory Ids Served To    alpha
    Should Be Equal    ${alpha}    ${{ ["uko://memory/session/alpha/a1"] }}
    ${beta}=    Memory Ids Served To    beta
    Should Be Empty    ${beta}
    ${gone}=    Call The Service    DELETE    /v1/memory/a1?session=alpha
    Should Be Equal    ${gone.json()}    ${{ {"forgotten": 1} }}
    ${again}=    Call The Service    DELETE    /v1/memory/a1?session=alpha
    Should Be Equal As Integers    ${again.status_code}    404
    ${after}=    Memory Ids Served To    alpha
    Should Be Empty    ${after}
    [Teardown]    The Service Is Stopped

A Pinned File Is The Hot Tier Of A Session's Request Until It Is Unpinned
    [Setup]    The Service Is Started And Ready
    ${pinned}=    Call The Service    POST    /v1/pins    {"target": "docs/notes.txt"}
    Should Be Equal As Integers    ${pinned.status_code}    201
    ${reasons}=    Tiered Reasons Served
    Should Contain    ${reasons}    hot: pinned
    ${gone}=    Call The Service    DELETE    /v1/pins?target=docs/notes.txt
    Should Be Equal    ${gone.json()}    ${{ {"unpinned": "docs/notes.txt"} }}
    ${reasons}=    Tiered Reasons Served
    Should Not Contain    ${reasons}    hot: pinned
    ${again}=    Call The Service    DELETE    /v1/pins?target=docs/notes.txt
    Should Be Equal As Integers    ${again.status_code}    404
    [Teardown]    The Service Is Stopped

Bad Requests Get One Line Naming What To Fix, And Change Nothing
    [Setup]    The Service Is Started And Ready
    ${negative}=    Call The Service    POST    /v1/assemble    {"query": "budget", "budget": -3}
    Should Be Equal As Integers    ${negative.status_code}    400
    Should Be Equal    ${negative.json()}[detail]    budget must be a positive number of tokens, got -3
    ${unnamed}=    Call The Service    POST    /v1/assemble    {"budget": 300}
    Should Be Equal As Integers    ${unnamed.status_code}    422
    ${where}=    Evaluate    [e["loc"] for e in $unnamed.json()["detail"]]
    Should Be Equal    ${where}    ${{ [["body", "query"]] }}
    ${listed}=    Call The Service    POST    /v1/assemble    {"query": "x", "budget": 300, "filters": [null]}
    Should Be Equal As Integers    ${listed.status_code}    422
    ${broken}=    Call The Service    POST    /v1/memory    {"text": "half a note
    Should Be Equal As Integers    ${broken.status_code}    422
    ${huge}=    Evaluate    json.dumps({"query": "x" * 17_000_000, "budget": 300})    modules=json
    ${over}=    Call The Service    POST    /v1/assemble    ${huge}
    Should Be Equal As Integers    ${over.status_code}    413
    Should Contain    ${over.json()}[detail]    service.max_body_bytes
    ${statistics}=    Run contextpipe    forget-memory    --global
    Should Contain    ${statistics.stdout}    forgot 0 memory items
    [Teardown]    The Service Is Stopped

A Chat Request Gets Context Before Its Messages, Which Come Back Unchanged
    [Setup]    The Service Is Started And Ready
    ${messages}=    Set Variable
    ...    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "${QUESTION}"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "nothing found"}]
    ${answer}=    Call The Service    POST    /v1/chat/assemble
    ...    {"model": "gpt-4o-mini", "budget": 500, "request_id": "req-7", "messages": ${messages}}
    Should Be Equal As Integers    ${answer.status_code}    200
    ${served}=    Set Variable    ${answer.json()}
    Should Be Equal    ${served}[messages][1:]    ${{ json.loads($messages) }}
    Should Be Equal    ${served}[messages][0][role]    system
    ${meta}=    Set Variable    ${served}[metadata]
    Should Be Equal    ${{ ($meta["request_id"], $meta["window"], $meta["fallback_reason"]) }}    ${{ ("req-7", 128000, "") }}
    Should Be Equal As Integers    ${meta}[fragments_injected]    ${{ len($meta["fragment_ids"]) }}
    Should Be True    0 < ${meta}[fragments_injected] <= ${meta}[fragments_available]
    Should Be True    ${meta}[tokens_injected] <= 500 + 40
    ${client}=    A Client
    ${remote}=    Call Method    ${client}    assemble_chat
    ...    ${{ {"model": "gpt-4o-mini", "budget": 500, "messages": json.loads($messages)} }}
    Should Be Equal    ${{ list($remote.metadata.fragment_ids) }}    ${meta}[fragment_ids]
    ${unknown}=    Call The Service    POST    /v1/chat/assemble
    ...    {"model": "my-model", "messages": [{"role": "user", "content": "budget"}]}
    Should Be Equal As Integers    ${unknown.status_code}    400
    Should Start With    ${unknown.json()}[detail]    unknown model 'my-model': give a budget
    Call Method    ${client}    close
    [Teardown]    The Service Is Stopped

A Graph Node Comes With The Edges The Command Line Shows
    [Setup]    The Service Is Started And Ready
    ${uri}=    Set Variable    uko://code/docs/allocator.py#Allocator
    # A URI's '#' starts a URL's fragment: it travels encoded, as any client's library does.
    ${answer}=    Call The Service    GET    /v1/graph/node?uri=${{ urllib.parse.quote($uri, safe="") }}&hops=1
    Should Be Equal As Integers    ${answer.status_code}    200
    Should Be Equal    ${answer.json()}[node][kind]    class
    ${served}=    Evaluate    sorted(f"{e['source']} -[{e['type']}]-> {e['target']}" for e in $answer.json()["edges"])
    ${shown}=    Run contextpipe    graph    show    ${uri}
    ${lines}=    Evaluate    sorted(line.strip() for line in $shown.stdout.splitlines()[1:] if line.strip())
    Should Be Equal    ${served}    ${lines}
    Should Not Be Empty    ${served}
    ${names}=    Evaluate    [n["uri"] for n in $answer.json()["nodes"]]
    Should Contain    ${names}    uko://code/docs/allocator.py
    ${missing}=    Call The Service    GET    /v1/graph/node?uri=uko://code/none.py
    Should Be Equal As Integers    ${missing.status_code}    404
    [Teardown]    The Service Is Stopped

An Index Job Runs Only A Configured Root, And Reports How Far It Got
    A Config File With    [service]    index_roots = ["docs"]
    The Service Is Started And Ready
    ${started}=    Call The Service    POST    /v1/index    {"root": "docs"}
    Should Be Equal As Integers    ${started.status_code}    202
    ${id}=    Set Variable    ${started.json()}[id]
    ${job}=    Wait Until Keyword Succeeds    60s    0.2s    The Job Is Done    ${id}
    Should Be Equal    ${job}[root]    docs
    Should Be True    ${job}[files_done] == ${job}[files_total] == ${job}[summary][files_seen] > 0
    FOR    ${root}    IN    /etc    ../    docs/../..
        ${refused}=    Call The Service    POST    /v1/index    {"root": "${root}"}
        Should Be Equal As Integers    ${refused.status_code}    403
        Should Contain    ${refused.json()}[detail]    is not one of service.index_roots: docs
    END
    ${unknown}=    Call The Service    GET    /v1/jobs/no-such-job
    Should Be Equal As Integers    ${unknown.status_code}    404
    [Teardown]    Run Keywords    The Service Is Stopped    AND    No Config File

The Python Client Answers As The Pipeline Does, Switched By One Line
    [Setup]    The Service Is Started And Ready
    ${client}=    A Client
    ${remote}=    Call Method    ${client}    assemble    ${QUESTION}    budget=${600}
    ${local}=    Assemble In Process    ${PROJECT}    ${QUESTION}    600
    Should Be Equal    ${remote.text}    ${local.text}
    Should Be Equal    ${remote.fragments}    ${local.fragments}
    ${item}=    Call Method    ${client}    remember    The gamma build takes 12 minutes
    ...    session=gamma    item_id=g1
    Should Be Equal    ${{ ($item.id, $item.scope.value, $item.owner) }}    ${{ ("g1", "session", "gamma") }}
    ${seen}=    Call Method    ${client}    assemble    gamma build minutes    budget=${500}
    ...    session=gamma
    ${uris}=    Evaluate    [f.uko_uri for f in $seen.fragments if f.source.kind == "memory"]
    Should Be Equal    ${uris}    ${{ ["uko://memory/session/gamma/g1"] }}
    ${count}=    Call Method    ${client}    forget_memory    session=gamma
    Should Be Equal As Integers    ${count}    1
    ${unpinned}=    Call Method    ${client}    unpin    docs/never-pinned.txt
    Should Be Equal    ${unpinned}    ${False}
    Run Keyword And Expect Error
    ...    *ContextpipeError: service answered 400: budget must be a positive number of tokens, got -3
    ...    Call Method    ${client}    assemble    budget    budget=${-3}
    Call Method    ${client}    close
    [Teardown]    The Service Is Stopped

Another Address Than Loopback Is Refused Until Tokens Guard It
    ${error}=    Run contextpipe And Expect Failure    serve    --host    0.0.0.0
    Should Contain    ${error}    service.host '0.0.0.0'
    Should Contain    ${error}    only loopback

Beyond Its Queue A Request Is Refused At Once With Retry-After
    [Documentation]    One request runs (a strategy holds it for its whole deadline, ten
    ...    times what the test needs), one waits; the next two are refused at once.
    ${site}=    A Plugin Distribution    interrupting    interrupting_plugin
    ${mark}=    Set Variable    ${PROJECT}/waiting-started
    A Config File With    [service]    max_running = 1    max_queued = 1    retry_after_s = 7
    ...    shutdown_grace_s = 1
    Start The Service    ${PROJECT}    env:PYTHONPATH=${site}
    ...    env:CONTEXTPIPE_TEST_WAITING_MARK=${mark}
    Wait Until Ready
    Send In The Background    held    POST    /v1/assemble
    ...    {"query": "budget", "budget": 300, "deadline_ms": 60000, "strategies": {"waiting": {}}}
    Wait Until Created    ${mark}    timeout=60s
    Send In The Background    queued    POST    /v1/assemble    {"query": "budget", "budget": 300}
    Wait Until Keyword Succeeds    60s    0.1s    One Request Waits
    FOR    ${turn}    IN RANGE    2
        ${refused}=    Call The Service    POST    /v1/assemble    {"query": "budget", "budget": 300}
        Should Be Equal As Integers    ${refused.status_code}    503
        Should Be Equal    ${refused.headers}[retry-after]    7
    END
    # A proxy's chat request is never failed: it gets its messages back, saying why.
    ${chat}=    Call The Service    POST    /v1/chat/assemble
    ...    {"model": "gpt-4o", "messages": [{"role": "user", "content": "budget"}]}
    Should Be Equal As Integers    ${chat.status_code}    200
    Should Be Equal    ${chat.json()}[messages]    ${{ [{"role": "user", "content": "budget"}] }}
    Should Be Equal    ${chat.json()}[metadata][fallback_reason]    busy
    ${metrics}=    Call The Service    GET    /metrics
    Should Contain    ${metrics.text}    contextpipe_chat_fallbacks_total{reason="busy"} 1.0
    ${alive}=    Call The Service    GET    /healthz
    Should Be Equal As Integers    ${alive.status_code}    200
    [Teardown]    Run Keywords    The Service Is Stopped    AND    No Config File

On SIGTERM The Request In Flight Is Answered, Then The Service Exits 0
    ${site}=    A Plugin Distribution    interrupting    interrupting_plugin
    ${mark}=    Set Variable    ${PROJECT}/waiting-started-2
    Start The Service    ${PROJECT}    env:PYTHONPATH=${site}
    ...    env:CONTEXTPIPE_TEST_WAITING_MARK=${mark}
    Wait Until Ready
    # The strategy waits ten minutes; its deadline (3 s) ends the request, with the keyword
    # strategy's answer, long before the shutdown grace (30 s) would.
    Send In The Background    held    POST    /v1/assemble
    ...    {"query": "budget", "budget": 300, "strategies": {"waiting": {"weight": 1}, "simple-keyword": {}}, "deadline_ms": 3000}
    Wait Until Created    ${mark}    timeout=60s
    ${status}=    Stop The Service
    ${said}=    Service Output
    Should Be Equal As Integers    ${status}    0    the service exited ${status}: ${said}
    ${answer}=    Answer To    held
    Should Be Equal As Integers    ${answer.status_code}    200
    ${reports}=    Evaluate    {r["name"]: r["status"] for r in $answer.json()["strategies"]}
    Should Be Equal    ${reports}[waiting]    timeout
    Should Be Equal    ${reports}[simple-keyword]    ok

The Schema Holds Under Generated Requests: None Gets A Server Error
    [Documentation]    schemathesis generates requests from `/openapi.json` (20 a operation,
    ...    deterministic, then sequences of calls) and checks that none is answered 5xx. Last:
    ...    what it sends changes the project's memory and pins.
    [Setup]    The Service Is Started And Ready
    ${url}=    Service URL
    ${result}=    Run Process    schemathesis    run    ${url}/openapi.json
    ...    --checks    not_a_server_error    --max-examples    20    --generation-deterministic
    ...    --no-color    cwd=${PROJECT}    timeout=600s    on_timeout=kill
    Log    ${result.stdout}
    Should Be Equal As Integers    ${result.rc}    0    schemathesis found a server error:\n${result.stdout}
    [Teardown]    The Service Is Stopped


*** Keywords ***
The Service Is Started And Ready
    Start The Service    ${PROJECT}
    Wait Until Ready

The Service Is Stopped
    ${status}=    Stop The Service
    ${said}=    Service Output
    Should Be Equal As Integers    ${status}    0    the service exited ${status}: ${said}

Memory Ids Served To
    [Arguments]    ${session}
    ${answer}=    Call The Service    POST    /v1/assemble
    ...    {"query": "allocator budget alpha", "budget": 1000, "session": "${session}"}
    Should Be Equal As Integers    ${answer.status_code}    200
    ${ids}=    Evaluate    sorted(f["uko_uri"] for f in $answer.json()["fragments"] if f["source"]["kind"] == "memory")
    RETURN    ${ids}

Tiered Reasons Served
    ${answer}=    Call The Service    POST    /v1/assemble
    ...    {"query": "packer budget", "budget": 2000, "session": "pins", "strategies": {"tiered": {}}}
    Should Be Equal As Integers    ${answer.status_code}    200
    ${reasons}=    Evaluate    [p["reason"] for f in $answer.json()["fragments"] for p in f["provenance"]]
    RETURN    ${reasons}

The Job Is Done
    [Arguments]    ${id}
    ${answer}=    Call The Service    GET    /v1/jobs/${id}
    Should Be Equal    ${answer.json()}[status]    done    ${answer.json()}
    RETURN    ${answer.json()}

One Request Waits
    ${metrics}=    Call The Service    GET    /metrics
    Should Contain    ${metrics.text}    contextpipe_requests_queued 1.0
    Should Contain    ${metrics.text}    contextpipe_requests_in_flight 1.0
