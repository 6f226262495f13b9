*** Settings ***
Documentation       `contextpipe eval beir` and `contextpipe tune beir`, run as a user would, on a
...                 tiny BEIR folder written by the test: the figures of the default mix and of
...                 each strategy alone, the JSON keys, a one-line error for a folder that is not
...                 a BEIR folder, and a tuned config.toml that the next commands read.
Resource            resources/contextpipe.resource
Suite Setup         A Project With A Tiny BEIR Folder
Suite Teardown      Remove The Project Folder


*** Variables ***
@{FIGURE_KEYS}       queries    ndcg@10    recall@10    recall@100
...                  budget_hit@500    budget_hit@1000    budget_hit@2000


*** Test Cases ***
Eval Reports The Figures Of The Default Mix And Of Each Strategy Alone
    [Documentation]    q1 finds its document first (1), q2 second, after d1 (1 / log2 3):
    ...    nDCG@10 = (1 + 0.6309) / 2.
    ${result}=    Run contextpipe    eval    beir    tiny    --format    json
    ${figures}=    Evaluate    json.loads($result.stdout)    modules=json
    Should Be Equal    ${{ list($figures) }}    ${{ [*$FIGURE_KEYS, "per_strategy"] }}
    Should Be Equal As Integers    ${figures}[queries]    2
    Should Be Equal As Numbers    ${figures}[ndcg@10]    0.8155
    Should Be Equal As Numbers    ${figures}[recall@10]    1.0
    Should Be Equal As Numbers    ${figures}[budget_hit@500]    1.0
    ${alone}=    Set Variable    ${figures}[per_strategy][simple-keyword]
    Should Be Equal    ${{ list($alone) }}    ${FIGURE_KEYS}
    Should Be Equal As Numbers    ${alone}[ndcg@10]    0.8155

Eval Prints A Table, And No Progress Bar When Not On A Terminal
    ${result}=    Run contextpipe    eval    beir    tiny
    Should Start With    ${result.stdout}    BEIR tiny (test): 2 judged queries
    ${line}=    Line Of Output Containing    ${result.stdout}    default mix
    Should Contain    ${line}    0.8155
    # Only the strategies that have nothing to do on a BEIR set say so: no progress bar.
    Should Be Equal    ${result.stderr}
    ...    contextpipe: warning: breadth-depth-navigator ran for no query (skipped: can_handle returned 0 for this request)\ncontextpipe: warning: recency ran for no query (skipped: can_handle returned 0 for this request)\ncontextpipe: warning: tiered ran for no query (skipped: can_handle returned 0 for this request)

A Folder That Is Not A BEIR Folder Stops With One Line Naming The Missing File
    Create Directory    ${PROJECT}/not-beir
    ${error}=    Run contextpipe And Expect Failure    eval    beir    not-beir
    Should Contain    ${error}    not-beir/corpus.jsonl: no such file

A Missing Split Names Its Qrels File
    ${error}=    Run contextpipe And Expect Failure    eval    beir    tiny    --split    train
    Should Contain    ${error}    tiny/qrels/train.tsv: no such file

Tune Reads The Train Split Unless Told
    [Documentation]    It read test, the split eval judges by, unless told.
    ${error}=    Run contextpipe And Expect Failure    tune    beir    tiny
    Should Contain    ${error}    tiny/qrels/train.tsv: no such file
    File Should Not Exist    ${PROJECT}/config.toml

Tune Writes The Winners To config.toml, Which The Next Commands Read
    A Config File With    \# my settings    [budget]    default = 1500
    ${result}=    Run contextpipe    tune    beir    tiny    --split    test
    Should Contain    ${result.stdout}    wrote config.toml
    ${text}=    Get File    ${PROJECT}/config.toml
    Should Start With    ${text}    \# [contextpipe tune] Tuned for nDCG@10
    Should Contain    ${text}    \# my settings
    ${shown}=    Run contextpipe    config    show
    Should Contain    ${shown.stdout}    budget.default = 1500 \ #
    Line Of Output Containing    ${shown.stdout}    fusion.rrf_k =
    ${source}=    Line Of Output Containing    ${shown.stdout}    packing.mmr_lambda =
    Should End With    ${source}    config.toml
    Run contextpipe    eval    beir    tiny
    [Teardown]    No Config File


*** Keywords ***
A Project With A Tiny BEIR Folder
    A Fresh Project Folder
    ${corpus}=    Catenate    SEPARATOR=\n
    ...    {"_id": "d1", "title": "Coffee and sleep", "text": "Caffeine in coffee delays sleep."}
    ...    {"_id": "d2", "title": "Tea", "text": "Green tea has less caffeine than coffee."}
    ...    {"_id": "d3", "title": "Tides", "text": "The moon causes the ocean tides."}
    ...    {"_id": "d4", "title": "Bees", "text": "Bees make honey from nectar."}
    ...    {"_id": "d5", "title": "Comets", "text": "Comets grow tails near the sun."}
    Create File    ${PROJECT}/tiny/corpus.jsonl    ${corpus}\n
    ${queries}=    Catenate    SEPARATOR=\n
    ...    {"_id": "q1", "text": "what causes tides"}
    ...    {"_id": "q2", "text": "coffee caffeine sleep"}
    Create File    ${PROJECT}/tiny/queries.jsonl    ${queries}\n
    Create File    ${PROJECT}/tiny/qrels/test.tsv
    ...    query-id\tcorpus-id\tscore\nq1\td3\t1\nq2\td2\t1\n
