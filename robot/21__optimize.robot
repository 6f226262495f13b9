*** Settings ***
Documentation       Bring your own chunks, as a RAG application in another language does: the
...                 chunks its retriever found, posted to `/v1/optimize` of a running service,
...                 and the same file given to `contextpipe optimize` and `Client.optimize`. Both leave out the same
...                 exact duplicates and paraphrases, keep the same chunks within the budget,
...                 and name the chunk and field of bad input in one line (422, exit status 1).
Library             resources/Service.py
Resource            resources/contextpipe.resource
Suite Setup         A Fresh Project Folder With Chunks
Suite Teardown      Remove The Project Folder


*** Variables ***
${QUESTION}     does aspirin prevent a second heart attack?


*** Test Cases ***
The Service Leaves Out What The Command Line Leaves Out
    [Setup]    The Service Is Started And Ready
    ${chunks}=    Get File    ${PROJECT}/chunks.jsonl
    ${body}=    Evaluate    {"chunks": [json.loads(line) for line in $chunks.splitlines()], "query": $QUESTION, "token_budget": 200, "output": "json"}    modules=json
    ${answer}=    Call The Service    POST    /v1/optimize    ${body}
    Should Be Equal As Integers    ${answer.status_code}    200
    ${served}=    Set Variable    ${answer.json()}
    ${run}=    Run contextpipe    optimize    chunks.jsonl    --query    ${QUESTION}    --budget    200    --format    json
    ${local}=    Evaluate    json.loads($run.stdout)    modules=json
    Should Be Equal    ${served}[text]    ${local}[text]
    ${kept}=    Evaluate    [c["id"] for c in $served["chunks"]]
    Should Be Equal    ${kept}    ${{ ["aspirin", "statins", "eiffel"] }}
    ${removed}=    Evaluate    {r["id"]: (r["reason"], r["by"]) for r in $served["removed"]}
    Should Be Equal    ${removed}
    ...    ${{ {"aspirin-copy": ("exact_duplicate", "aspirin"), "aspirin-paraphrase": ("paraphrase", "aspirin")} }}
    Should Fit In Budget    ${served}[text]    200
    Should Be Equal As Integers    ${served}[stats][embedded]    6    # five chunks and the query
    ${client}=    A Client
    ${remote}=    Call Method    ${client}    optimize    ${body}
    Should Be Equal    ${remote.text}    ${served}[text]
    Should Be Equal    ${{ [r.detail for r in $remote.removed] }}    ${{ [r["detail"] for r in $served["removed"]] }}
    Call Method    ${client}    close
    [Teardown]    The Service Is Stopped

The Command Line Prints The Context And Says What It Left Out
    ${run}=    Run contextpipe    optimize    chunks.jsonl    --query    ${QUESTION}    --budget    120
    Should Start With    ${run.stdout}    \#\#\# aspirin\n\nAspirin lowers the risk
    Should Not Contain    ${run.stdout}    another heart attack
    Should Be One Line    ${run.stderr}
    Should Start With    ${run.stderr}    -- 3 of 5 chunks,
    Should Contain    ${run.stderr}    1 exact duplicates, 1 paraphrases

A Retriever's Fifty Chunks With Their 1,536-Dimension Vectors Are Taken In
    [Documentation]    About 1.5 MB of JSON: what an application using a common embedding API
    ...    sends with every question.
    [Setup]    The Service Is Started And Ready
    ${body}=    Evaluate    {"chunks": [{"id": f"c{i}", "text": f"chunk {i} about backups and restores", "score": 1 - i / 50, "embedding": [random.Random(i * 1536 + j).uniform(-1, 1) for j in range(1536)]} for i in range(50)], "token_budget": 500}    modules=random
    ${answer}=    Call The Service    POST    /v1/optimize    ${body}
    Should Be Equal As Integers    ${answer.status_code}    200    ${answer.text}
    Should Be True    len($answer.json()["chunks"]) > 0
    Should Fit In Budget    ${answer.json()}[text]    500
    [Teardown]    The Service Is Stopped

Bad Chunks Are Named, Over HTTP And At The Command Line
    [Setup]    The Service Is Started And Ready
    ${twice}=    Call The Service    POST    /v1/optimize
    ...    {"chunks": [{"id": "c1", "text": "a"}, {"id": "c1", "text": "b"}], "token_budget": 50}
    Should Be Equal As Integers    ${twice.status_code}    422
    Should Be Equal    ${twice.json()}[detail]
    ...    optimize request chunk 'c1' id: repeats an earlier chunk's; ids must be unique
    ${unequal}=    Call The Service    POST    /v1/optimize
    ...    {"chunks": [{"id": "c1", "text": "a", "embedding": [1, 0]}, {"id": "c2", "text": "b", "embedding": [1, 0, 0]}], "token_budget": 50}
    Should Be Equal As Integers    ${unequal.status_code}    422
    Should Be Equal    ${unequal.json()}[detail]
    ...    optimize request chunk 'c2' embedding: 3 values, but chunk 'c1' embedding has 2
    ${textless}=    Call The Service    POST    /v1/optimize    {"chunks": [{"id": "c1"}], "token_budget": 50}
    Should Be Equal As Integers    ${textless.status_code}    422
    Should Be Equal    ${textless.json()}[detail][0][loc]    ${{ ["body", "chunks", 0, "text"] }}
    Create File    ${PROJECT}/bad.jsonl    {"id": "c1", "text": "fine"}\n{"id": "c2", "score": 0.5}\n
    ${failed}=    Run contextpipe And Expect Failure    optimize    bad.jsonl    --budget    50
    Should Be Equal    ${failed}    contextpipe: error: bad.jsonl line 2: text: Field required
    [Teardown]    The Service Is Stopped


*** Keywords ***
A Fresh Project Folder With Chunks
    [Documentation]    What a retriever over-fetched: a copy, a paraphrase, and two others;
    ...    and an index, which the service's readiness asks for (optimising needs none).
    A Project With The Example Documents Indexed
    ${lines}=    Catenate    SEPARATOR=\n
    ...    {"id": "aspirin", "text": "Aspirin lowers the risk of a second heart attack in adults.", "score": 0.9}
    ...    {"id": "aspirin-copy", "text": "aspirin lowers the risk of a second heart attack in adults.", "score": 0.85}
    ...    {"id": "aspirin-paraphrase", "text": "In adults, aspirin reduces the risk of having another heart attack.", "score": 0.8}
    ...    {"id": "statins", "text": "Statins reduce cholesterol and cardiovascular events in patients.", "score": 0.6}
    ...    {"id": "eiffel", "text": "The Eiffel Tower was completed in 1889 for the World's Fair.", "score": 0.1}
    Create File    ${PROJECT}/chunks.jsonl    ${lines}\n

The Service Is Started And Ready
    Start The Service    ${PROJECT}
    Wait Until Ready

The Service Is Stopped
    ${status}=    Stop The Service
    ${said}=    Service Output
    Should Be Equal As Integers    ${status}    0    the service exited ${status}: ${said}
