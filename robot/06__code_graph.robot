*** Settings ***
Documentation       Index the source of a real installed package, the standard library's `json`
...                 (copied with compiled `__pycache__` files next to it), and inspect the UKO
...                 graph: known import edges, node kinds, edge types, the summary's skip counts.
Resource            resources/contextpipe.resource
Suite Setup         A Copy Of The Installed json Package
Suite Teardown      Remove The Project Folder


*** Variables ***
${INIT}         uko://code/json/__init__.py
${DECODER}      uko://code/json/decoder.py
${SCANNER}      uko://code/json/scanner.py


*** Test Cases ***
Indexing The json Package Prints Nodes, Edges, Fragments And Skipped Binary Files
    ${result}=    Run contextpipe    index    json
    ${seen}=    Evaluate    ${PY_FILES} + ${PYC_FILES}
    Should Contain    ${result.stdout}
    ...    ${seen} files seen, ${PY_FILES} indexed, 0 unchanged, 0 removed, ${PYC_FILES} skipped;
    Should Contain    ${result.stdout}    ; ${PYC_FILES} binary or not UTF-8;
    ${counts}=    Should Match Regexp    ${result.stdout}
    ...    ; (\\d+) nodes, (\\d+) declared edges, (\\d+) fragments written in \\d+\\.\\d\\d s
    Should Be True    int($counts[1]) > 0 and int($counts[2]) > 0 and int($counts[3]) > 0
    Should Match Regexp    ${result.stdout}    (?m)^store: .*\\(${counts}[3] fragments\\b
    Set Suite Variable    ${NODES_WRITTEN}    ${{ int($counts[1]) }}

Indexing It Again Changes Nothing
    ${result}=    Run contextpipe    index    json
    ${seen}=    Evaluate    ${PY_FILES} + ${PYC_FILES}
    ${counts}=    Should Match Regexp    ${result.stdout}
    ...    ${seen} files seen, 0 indexed, (\\d+) unchanged, 0 removed, (\\d+) skipped
    Should Be True    ${counts}[1] + ${counts}[2] == ${seen}    ${result.stdout}
    Should Be True    ${counts}[1] >= ${PY_FILES}    ${result.stdout}
    Should Contain    ${result.stdout}    0 nodes, 0 declared edges, 0 fragments written

The Graph Shows That json/__init__.py Imports json/decoder.py
    ${result}=    Run contextpipe    graph    show    ${INIT}    --hops    1
    ${first}=    Get Line    ${result.stdout}    0
    Should Be Equal    ${first}    ${INIT} (module, json/__init__.py)
    Edge Should Be Listed    ${result.stdout}    ${INIT} -[imports]-> ${DECODER}
    Edge Should Be Listed    ${result.stdout}    ${INIT} -[contains]-> ${INIT}#loads
    Edge Should Be Listed    ${result.stdout}    uko://dir/json/ -[contains]-> ${INIT}
    Edge Should Not Be Listed    ${result.stdout}    ${DECODER} -[imports]-> ${SCANNER}

Two Hops Reach What The Imported Module Imports
    ${result}=    Run contextpipe    graph    show    ${INIT}    --hops    2
    Edge Should Be Listed    ${result.stdout}    ${INIT} -[imports]-> ${DECODER}
    Edge Should Be Listed    ${result.stdout}    ${DECODER} -[imports]-> ${SCANNER}

Calls Are Resolved To Definitions In The Imported Module
    ${result}=    Run contextpipe    graph    show    ${INIT}#loads    --hops    1
    Should Contain    ${result.stdout}    ${INIT}#loads (function, json/__init__.py)
    Should Match Regexp    ${result.stdout}
    ...    (?m)^ {2}${INIT}#loads -\\[calls\\]-> ${DECODER}#JSONDecoder\\b

Graph Stats Count Nodes By Kind And Edges By Type
    ${result}=    Run contextpipe    graph    stats
    ${stats}=    Parse Graph Stats Text    ${result.stdout}
    Should Be Equal As Integers    ${stats}[nodes][module]    ${PY_FILES}
    FOR    ${kind}    IN    class    function    method
        Should Be True    ${stats}[nodes][${kind}] > 0    no ${kind} nodes:\n${result.stdout}
    END
    FOR    ${type}    IN    contains    imports    calls
        Should Be True    ${stats}[edges][${type}] > 0    no ${type} edges:\n${result.stdout}
    END
    Should Be True    ${stats}[edges][imports] >= 3    expected __init__ -> decoder, encoder...

Graph Stats Agree With What Indexing Wrote
    [Documentation]    The graph holds the nodes the first run wrote, plus the repository
    ...    and the one folder (json/); one module per indexed file.
    ${stats}=    Graph Stats As JSON
    ${nodes}=    Evaluate    sum($stats["nodes"].values())
    Should Be Equal As Integers    ${nodes}    ${NODES_WRITTEN + 2}
    Should Be Equal As Integers    ${stats}[nodes][directory]    1
    Should Be Equal As Integers    ${stats}[nodes][module]    ${PY_FILES}

Indexing As JSON Lists Every Skipped File With Its Reason
    ${result}=    Run contextpipe    index    json    --format    json
    ${summary}=    Evaluate    json.loads($result.stdout)["roots"][0]    modules=json
    ${skipped}=    Get Length    ${summary}[skipped_files]
    Should Be Equal As Integers    ${skipped}    ${PYC_FILES}
    Should Be Equal As Integers    ${summary}[files_seen]
    ...    ${{ $summary["indexed"] + $summary["unchanged"] + $skipped }}
    FOR    ${item}    IN    @{summary}[skipped_files]
        Should Match Regexp    ${item}[path]    ^json/__pycache__/.*\\.pyc$
        Should Be Equal    ${item}[reason]    binary or not UTF-8
    END

Indexing With --verbose Lists Every Skipped File With Its Reason
    ${result}=    Run contextpipe    --verbose    index    json
    ${lines}=    Get Lines Matching Regexp    ${result.stderr}
    ...    ^event='skipped' level='info' path='json/__pycache__/[^']+\\.pyc' reason='binary or not UTF-8'    partial_match=True
    ${count}=    Get Line Count    ${lines}
    Should Be Equal As Integers    ${count}    ${PYC_FILES}    stderr:\n${result.stderr}

Graph Stats As JSON Agree With The Text
    ${text}=    Run contextpipe    graph    stats
    ${expected}=    Parse Graph Stats Text    ${text.stdout}
    ${result}=    Run contextpipe    graph    stats    --format    json
    ${stats}=    Evaluate    json.loads($result.stdout)    modules=json
    Should Be Equal    ${stats}[nodes]    ${expected}[nodes]
    Should Be Equal    ${stats}[edges]    ${expected}[edges]
    Should Be Equal As Integers    ${stats}[nodes][repository]    1

Compiled Files Are Not In The Graph
    ${result}=    Run contextpipe    graph    show    uko://dir/json/    --hops    1
    Should Not Contain    ${result.stdout}    __pycache__
    Should Not Contain    ${result.stdout}    .pyc

Showing An Unknown Node Is A Clear Error
    ${error}=    Run contextpipe And Expect Failure    graph    show    uko://code/json/nope.py
    Should Contain    ${error}    uko://code/json/nope.py: no such node
    Should Contain    ${error}    contextpipe graph stats

Queries Find The Indexed Code
    ${context}=    Query As JSON    JSONDecoder raw_decode    800
    Should Not Be Empty    ${context}[fragments]
    ${paths}=    Evaluate    {f["source"]["path"] for f in $context["fragments"]}
    Should Contain    ${paths}    json/decoder.py


*** Keywords ***
A Copy Of The Installed json Package
    [Documentation]    The `json` package of the Python that runs contextpipe, copied into
    ...    a fresh project folder and compiled there, so that `__pycache__` holds .pyc files
    ...    whether or not the installed copy has them.
    A Fresh Project Folder
    ${found}=    Run Process    python    -c    import json, os; print(os.path.dirname(json.__file__))
    Should Be Equal As Integers    ${found.rc}    0    ${found.stderr}
    Copy Directory    ${found.stdout.strip()}    ${PROJECT}/json
    ${compiled}=    Run Process    python    -m    compileall    -q    json    cwd=${PROJECT}
    Should Be Equal As Integers    ${compiled.rc}    0    ${compiled.stderr}
    ${py}=    Count Files In Directory    ${PROJECT}/json    *.py
    ${pyc}=    Count Files In Directory    ${PROJECT}/json/__pycache__    *.pyc
    ${all}=    Count Items In Directory    ${PROJECT}/json
    Should Be Equal As Integers    ${all}    ${py + 1}    expected only .py files and __pycache__
    Should Be True    ${py} >= 4 and ${pyc} >= ${py}
    Set Suite Variable    ${PY_FILES}    ${py}
    Set Suite Variable    ${PYC_FILES}    ${pyc}
