*** Settings ***
Documentation       `contextpipe index` computes vectors after the text; `contextpipe query` then
...                 finds documents by meaning with `semantic-embedding` and `relevance`, and
...                 says what share of the store has vectors while they are being computed.
...                 The embedding model is the one `contextpipe model install` put in place.
Resource            resources/contextpipe.resource
Suite Setup         A Fresh Project Folder
Suite Teardown      Remove The Project Folder


*** Variables ***
${QUESTION}     How should I look after my new dog?


*** Test Cases ***
Indexing Computes Vectors After The Text And Says So
    Three Short Documents In docs/
    ${result}=    Run contextpipe    index    docs/
    Should Contain    ${result.stdout}    3 files seen, 3 indexed
    Should Match Regexp    ${result.stdout}    (?m)^vectors: 3 texts embedded with minilm in [\\d.]+ s; 3 of 3 have vectors$

A Question In Other Words Finds The Document By Meaning
    ${context}=    Query As JSON    ${QUESTION}    200    --strategy    semantic-embedding
    Should Be Equal    ${context}[fragments][0][source][path]    docs/puppy.md
    ${reason}=    Set Variable    ${context}[fragments][0][provenance][0][reason]
    Should Match Regexp    ${reason}    ^similarity 0\\.\\d{3} to the query \\(minilm\\)$

Keyword Search Alone Finds Nothing For It
    ${context}=    Query As JSON    ${QUESTION}    200    --strategy    simple-keyword
    Should Be Empty    ${context}[fragments]

The Default Mix Puts The Right Document First And Credits The Semantic Strategies
    ${context}=    Query As JSON    ${QUESTION}    200
    Should Be Equal    ${context}[fragments][0][source][path]    docs/puppy.md
    ${names}=    Strategies That Proposed    ${context}[fragments][0]
    Should Contain    ${names}    semantic-embedding
    Should Contain    ${names}    relevance

Indexing Again Embeds Only What Changed
    Create File    ${PROJECT}/docs/garden.md    \# Tomatoes\n\nWater tomato plants at the root, in the morning.\n
    ${result}=    Run contextpipe    index    docs/
    Should Match Regexp    ${result.stdout}    (?m)^vectors: 1 texts embedded with minilm in [\\d.]+ s; 4 of 4 have vectors$

With Embedding Disabled The Semantic Strategies Say Why And Keyword Search Still Works
    ${context}=    Query As JSON    rocket engine    200    env:CONTEXTPIPE_EMBEDDING__ENABLED=false
    Should Be Equal    ${context}[fragments][0][source][path]    docs/rocket.md
    ${report}=    Report For    ${context}    semantic-embedding
    Should Be Equal    ${report}[status]    skipped
    Should Contain    ${report}[reason]    [embedding] enabled = false

Vectors Held As float16 Find The Same Document, And Switching Back Rewrites The Matrix
    ${before}=    Query As JSON    ${QUESTION}    200    --strategy    semantic-embedding
    Run contextpipe    index    docs/    env:CONTEXTPIPE_STORE__VECTOR_DTYPE=float16
    File Should Exist    ${PROJECT}/.contextpipe/vectors.matrix.f16.faiss
    File Should Not Exist    ${PROJECT}/.contextpipe/vectors.matrix.npy
    ${half}=    Query As JSON    ${QUESTION}    200    --strategy    semantic-embedding
    ...    env:CONTEXTPIPE_STORE__VECTOR_DTYPE=float16
    ${paths}=    Evaluate    [f["source"]["path"] for f in $half["fragments"]]
    ${expected}=    Evaluate    [f["source"]["path"] for f in $before["fragments"]]
    Should Be Equal    ${paths}    ${expected}
    Should Be Equal    ${half}[fragments][0][provenance][0][reason]
    ...    ${before}[fragments][0][provenance][0][reason]
    ${after}=    Query As JSON    ${QUESTION}    200    --strategy    semantic-embedding
    File Should Exist    ${PROJECT}/.contextpipe/vectors.matrix.npy
    File Should Not Exist    ${PROJECT}/.contextpipe/vectors.matrix.f16.faiss
    Should Be Equal    ${after}[fragments]    ${before}[fragments]


*** Keywords ***
Three Short Documents In docs/
    Create File    ${PROJECT}/docs/bread.md
    ...    \# Baking bread\n\nKnead the dough, let it rise overnight, and bake it in a hot oven until the crust is golden.\n
    Create File    ${PROJECT}/docs/rocket.md
    ...    \# Rockets\n\nA rocket engine burns fuel and oxidiser to push the vehicle into orbit around the planet.\n
    Create File    ${PROJECT}/docs/puppy.md
    ...    \# Caring for a puppy\n\nYoung animals of this kind need walks, food several times a day and visits to the vet.\n
