*** Settings ***
Documentation       `contextpipe eval locomo`, run as a user would, on a tiny LoCoMo-format file
...                 written by the test: recall of the evidence turns for the default mix and each
...                 strategy alone, the JSON keys, a skipped question, and a one-line error for a
...                 file that is not LoCoMo's format.
Resource            resources/contextpipe.resource
Suite Setup         A Project With A Tiny LoCoMo File
Suite Teardown      Remove The Project Folder


*** Test Cases ***
Eval Reports Recall Of The Evidence Turns, Overall, Per Category And Per Strategy
    ${result}=    Run contextpipe    eval    locomo    tiny.json    --format    json
    ${figures}=    Evaluate    json.loads($result.stdout)    modules=json
    Should Be Equal    ${{ list($figures) }}
    ...    ${{ ["questions", "recall@5", "recall@10", "recall@25", "by_category", "skipped", "per_strategy"] }}
    Should Be Equal As Integers    ${figures}[questions]    2
    Should Be Equal As Integers    ${figures}[skipped]    1
    Should Be Equal    ${{ list($figures["by_category"]) }}    ${{ ["multi-hop", "single-hop", "adversarial"] }}
    ${keyword}=    Set Variable    ${figures}[per_strategy][simple-keyword]
    Should Be Equal As Numbers    ${keyword}[recall@5]    1.0
    Should Be Equal As Numbers    ${figures}[recall@25]    1.0

Eval Prints A Table Of Recall
    ${result}=    Run contextpipe    eval    locomo    tiny.json
    Should Start With    ${result.stdout}
    ...    LoCoMo tiny.json: 2 questions (categories 1-4), 1 skipped without valid evidence
    ${line}=    Line Of Output Containing    ${result.stdout}    simple-keyword
    Should Contain    ${line}    1.0000

A File That Is Not LoCoMo's Format Stops With One Line
    Create File    ${PROJECT}/bad.json    {"conversation": {}}
    ${error}=    Run contextpipe And Expect Failure    eval    locomo    bad.json
    Should Contain    ${error}    bad.json: expected a JSON list of LoCoMo samples


*** Keywords ***
A Project With A Tiny LoCoMo File
    A Fresh Project Folder
    ${sample}=    Catenate
    ...    [{"sample_id": "c1", "conversation": {"speaker_a": "Ann", "speaker_b": "Ben",
    ...    "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [
    ...    {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a greyhound called Pixel."},
    ...    {"speaker": "Ben", "dia_id": "D1:2", "text": "I started pottery classes on Mondays."}],
    ...    "session_2_date_time": "10:00 am on 2 June, 2023", "session_2": [
    ...    {"speaker": "Ann", "dia_id": "D2:1", "text": "Pixel won a race at the park."},
    ...    {"speaker": "Ben", "dia_id": "D2:2", "text": "My pottery bowl cracked in the kiln."}]},
    ...    "qa": [{"question": "What is the name of the greyhound?", "category": 4, "evidence": ["D1:1"]},
    ...    {"question": "What happened to the pottery in the kiln?", "category": 1, "evidence": ["D1:2; D2:02"]},
    ...    {"question": "What colour is the kiln?", "category": 5, "evidence": ["D2:2"]},
    ...    {"question": "Who won the lottery?", "category": 4, "evidence": ["D7:7"]}]}]
    Create File    ${PROJECT}/tiny.json    ${sample}
