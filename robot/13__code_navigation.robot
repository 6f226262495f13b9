*** Settings ***
Documentation       Code questions through the real command: `index`, then `query` with `--focus`
...                 (a symbol, an unknown name, a path:line) and `--prefer-source`, and
...                 `eval fileloc` on a tiny git repository made by the test.
Resource            resources/contextpipe.resource
Suite Setup         A Small Shop, Indexed, In A Git Repository
Suite Teardown      Remove The Project Folder


*** Variables ***
${NAVIGATOR}        breadth-depth-navigator
&{NO_VECTORS}       env:CONTEXTPIPE_EMBEDDING__ENABLED=false


*** Test Cases ***
A Focus On A Symbol Gives It In Full, And Its Callers With The Path That Reached Them
    ${context}=    Query As JSON    what does this do?    2000    --focus    apply_discount
    ...    --strategy    ${NAVIGATOR}    &{NO_VECTORS}
    ${focus}=    Fragment Of    ${context}    uko://code/shop/pricing.py#apply_discount
    Should Be Equal As Integers    ${focus}[detail_depth]    9
    Should Start With    ${focus}[provenance][0][reason]    focus apply_discount
    ${caller}=    Fragment Of    ${context}    uko://code/shop/checkout.py#checkout
    Should Start With    ${caller}[provenance][0][reason]
    ...    calls → apply_discount, 1 hop from focus apply_discount

An Unknown Focus Is Named In The Report And The Command Succeeds
    ${context}=    Query As JSON    what does this do?    2000    --focus    NoSuchThing
    ...    --focus    apply_discount    --strategy    ${NAVIGATOR}    &{NO_VECTORS}
    ${report}=    Report For    ${context}    ${NAVIGATOR}
    Should Be Equal    ${report}[status]    ok
    Should Be Equal    ${report}[reason]    unknown focus: NoSuchThing
    ${focus}=    Fragment Of    ${context}    uko://code/shop/pricing.py#apply_discount
    Should Not Contain    ${focus}[provenance][0][reason]    NoSuchThing

A Focus At path:line Starts From The Definition Holding That Line
    ${context}=    Query As JSON    what does this do?    2000    --focus    shop/pricing.py:5
    ...    --strategy    ${NAVIGATOR}    &{NO_VECTORS}
    ${focus}=    Fragment Of    ${context}    uko://code/shop/pricing.py#apply_discount
    Should Be Equal As Integers    ${focus}[detail_depth]    9

Prefer Source Puts The Source Before The Test That Matches Better
    ${plain}=    Query As JSON    discount    2000    --strategy    simple-keyword
    ...    &{NO_VECTORS}
    ${first}=    Best Fragment    ${plain}
    Should Be Equal    ${first}[source][path]    tests/test_pricing.py
    ${code}=    Query As JSON    discount    2000    --strategy    simple-keyword
    ...    --prefer-source    &{NO_VECTORS}
    ${first}=    Best Fragment    ${code}
    Should Be Equal    ${first}[source][path]    shop/pricing.py

Eval Fileloc Reports Acc@k For The Default Mix And Each Strategy Alone
    [Documentation]    Task t1 names `apply_discount`: its file is first. Task t2's gold file
    ...    is not in the repository: 0 at every k. So every Acc@k is 0.5.
    ${result}=    Run contextpipe    eval    fileloc    tasks.jsonl    --repo    repo
    ...    --format    json    &{NO_VECTORS}
    ${figures}=    Evaluate    json.loads($result.stdout)    modules=json
    Should Be Equal As Integers    ${figures}[tasks]    2
    FOR    ${k}    IN    1    3    5    10
        Should Be Equal As Numbers    ${figures}[acc@${k}]    0.5
    END
    Should Be True    ${figures}[index_seconds_per_task] > 0
    Should Be Equal As Numbers    ${figures}[per_strategy][${NAVIGATOR}][acc@1]    0.5
    Should Be Equal As Numbers    ${figures}[per_strategy][simple-keyword][acc@5]    0.5

Eval Fileloc With --limit Asks Only The First Tasks, And Prints A Table
    ${result}=    Run contextpipe    eval    fileloc    tasks.jsonl    --repo    repo
    ...    --limit    1    &{NO_VECTORS}
    Should Start With    ${result.stdout}    fileloc tasks.jsonl on repo: 1 tasks
    ${line}=    Line Of Output Containing    ${result.stdout}    default mix
    Should Match Regexp    ${line}    ^default mix\\s+1\\.0000\\s+1\\.0000\\s+1\\.0000\\s+1\\.0000\\s

A Malformed Task Stops With One Line Naming The File, Line And Key
    Create File    ${PROJECT}/bad.jsonl    {"id": "x", "base": "HEAD", "query": "q"}\n
    ${error}=    Run contextpipe And Expect Failure    eval    fileloc    bad.jsonl    --repo
    ...    repo
    Should Contain    ${error}    bad.jsonl:1: "gold_files" must be a non-empty list of paths

An Unknown Base Commit Names The Task
    Create File    ${PROJECT}/unknown.jsonl
    ...    {"id": "t9", "base": "0123456789abcdef", "query": "q", "gold_files": ["a.py"]}\n
    ${error}=    Run contextpipe And Expect Failure    eval    fileloc    unknown.jsonl    --repo
    ...    repo    &{NO_VECTORS}
    Should Contain    ${error}    task t9: base 0123456789abcdef


*** Keywords ***
A Small Shop, Indexed, In A Git Repository
    A Fresh Project Folder
    Copy Directory    ${FIXTURES}/shop    ${PROJECT}/repo
    Copy Directory    ${FIXTURES}/shop/shop    ${PROJECT}/shop
    Copy Directory    ${FIXTURES}/shop/tests    ${PROJECT}/tests
    Run contextpipe    index    shop    tests    &{NO_VECTORS}
    A Git Repository Of The Shop With Two Tasks


A Git Repository Of The Shop With Two Tasks
    Git    init    --quiet
    Git    add    .
    Git    commit    --quiet    -m    first
    ${first}=    Git    rev-parse    HEAD
    Append To File    ${PROJECT}/repo/shop/checkout.py    \n\ndef refund(order) -> int:\n${SPACE*4}return 0\n
    Git    commit    --quiet    -am    second
    ${second}=    Git    rev-parse    HEAD
    ${tasks}=    Catenate    SEPARATOR=\n
    ...    {"id": "t1", "base": "${first}", "query": "Round `apply_discount` down", "gold_files": ["shop/pricing.py"]}
    ...    {"id": "t2", "base": "${second}", "query": "Refunds are lost", "gold_files": ["shop/ledger.py"]}
    Create File    ${PROJECT}/tasks.jsonl    ${tasks}\n

Git
    [Arguments]    @{args}
    ${result}=    Run Process    git    -C    ${PROJECT}/repo    @{args}
    ...    env:GIT_AUTHOR_NAME=t    env:GIT_AUTHOR_EMAIL=t@example.com
    ...    env:GIT_COMMITTER_NAME=t    env:GIT_COMMITTER_EMAIL=t@example.com
    Should Be Equal As Integers    ${result.rc}    0    git ${args}: ${result.stderr}
    RETURN    ${result.stdout.strip()}

Fragment Of
    [Documentation]    The fragment of node URI in a JSON result.
    [Arguments]    ${context}    ${uri}
    FOR    ${fragment}    IN    @{context}[fragments]
        IF    $fragment["uko_uri"] == $uri    RETURN    ${fragment}
    END
    Fail    ${uri} is not in the context: ${{ [f["uko_uri"] for f in $context["fragments"]] }}

Best Fragment
    [Documentation]    The fragment with the highest fused score in a JSON result.
    [Arguments]    ${context}
    ${best}=    Evaluate    max($context["fragments"], key=lambda f: f["score"])
    RETURN    ${best}
