*** Settings ***
Documentation       `contextpipe index` killed with SIGKILL at any moment leaves the store at the
...                 old state or the new one, never broken: queries and `graph stats` still work,
...                 and indexing again completes. The folder is a copy of a few standard library
...                 packages with their compiled files (over 1,000 files), so that a run takes
...                 seconds and, off a terminal, logs progress lines.
Resource            resources/contextpipe.resource
Suite Setup         An Indexed Folder, Then A Larger Changed One With Its Reference Index
Suite Teardown      Remove The Project Folder


*** Variables ***
@{OLD_PACKAGES}         json    email
@{ADDED_PACKAGES}       encodings    asyncio    xml    importlib    multiprocessing    concurrent
# When to kill, as fractions of the time a full index of the new folder takes (start-up
# included): during start-up, the walk, the write transaction, and near the commit.
@{KILL_AT}              0.15    0.35    0.5    0.7    0.9


*** Test Cases ***
The Old And The New State Differ
    Should Be True    ${OLD}[fragments] < ${NEW}[fragments]
    Should Not Be Equal    ${OLD}[stats]    ${NEW}[stats]

Indexing More Than 1,000 Files Off A Terminal Logs Progress Lines On Stderr
    ${seen}=    Should Match Regexp    ${REFERENCE_RUN.stdout}    (\\d+) files seen
    ${total}=    Convert To Integer    ${seen}[1]
    Should Be True    ${total} > 1000    only ${total} files: the progress test needs more
    ${lines}=    Get Regexp Matches    ${REFERENCE_RUN.stderr}
    ...    (?m)^.*/src: (\\d+)/${total} files \\(\\d+ files/s\\)$    1
    ${expected}=    Evaluate    [str(n) for n in range(1000, ${total} + 1, 1000)]
    Should Be Equal    ${lines}    ${expected}    stderr:\n${REFERENCE_RUN.stderr}
    Should Not Contain    ${REFERENCE_RUN.stdout}    files/s

Killing Index At Any Moment Leaves The Old Or The New State
    ${outcomes}=    Create List
    FOR    ${fraction}    IN    @{KILL_AT}
        ${delay}=    Evaluate    round(${fraction} * ${FULL_INDEX_SECONDS}, 2)
        ${outcome}=    Kill An Index Run After    ${delay}
        Append To List    ${outcomes}    ${outcome}
    END
    Log List    ${outcomes}
    ${mid_write}=    Evaluate    [o for o in $outcomes if o["killed"] and o["wal_bytes"] > 0]
    Should Not Be Empty    ${mid_write}
    ...    no run was killed while writing its transaction: ${outcomes}

Indexing Again After The Kills Completes With The New State
    ${result}=    Run contextpipe    index    src
    Should Match Regexp    ${result.stdout}    \\d+ files seen, \\d+ indexed
    Store Should Be At    new
    ${result}=    Run contextpipe    index    src
    Should Contain    ${result.stdout}    0 indexed
    Should Contain    ${result.stdout}    0 fragments written


*** Keywords ***
An Indexed Folder, Then A Larger Changed One With Its Reference Index
    [Documentation]    The old state: `json` and `email` in src/, indexed into the project's
    ...    store, which is kept in old-store/. The new state: src/ with json/tool.py deleted,
    ...    json/scanner.py edited and six packages added, fully indexed into reference-store/
    ...    (same project folder, so the same paths): its counts, and how long it took.
    A Fresh Project Folder
    ${found}=    Run Process    python    -c    import sysconfig; print(sysconfig.get_paths()["stdlib"])
    Should Be Equal As Integers    ${found.rc}    0    ${found.stderr}
    ${stdlib}=    Set Variable    ${found.stdout.strip()}
    Copy Packages    ${stdlib}    @{OLD_PACKAGES}
    Run contextpipe    index    src
    ${old}=    Store State
    Set Suite Variable    ${OLD}    ${old}
    Copy Directory    ${PROJECT}/.contextpipe    ${PROJECT}/old-store
    Remove File    ${PROJECT}/src/json/tool.py
    Append To File    ${PROJECT}/src/json/scanner.py
    ...    \n\ndef added_after_the_first_index(text):\n${SPACE*4}return py_make_scanner(text)\n
    Copy Packages    ${stdlib}    @{ADDED_PACKAGES}
    ${started}=    Evaluate    time.perf_counter()    modules=time
    ${result}=    Run contextpipe    --store    reference-store    index    src
    ${seconds}=    Evaluate    time.perf_counter() - ${started}    modules=time
    Set Suite Variable    ${REFERENCE_RUN}    ${result}
    Set Suite Variable    ${FULL_INDEX_SECONDS}    ${seconds}
    Should Contain    ${result.stdout}    0 unchanged, 0 removed
    ${new}=    Store State    reference-store
    Set Suite Variable    ${NEW}    ${new}

Copy Packages
    [Documentation]    Copies standard library packages into src/ and compiles them at the
    ...    three optimisation levels, so that `__pycache__` holds three .pyc files (binary,
    ...    skipped by `index`) per module whether or not the installed copy has them.
    [Arguments]    ${stdlib}    @{packages}
    FOR    ${package}    IN    @{packages}
        Copy Directory    ${stdlib}/${package}    ${PROJECT}/src/${package}
        ${compiled}=    Run Process    python    -m    compileall    -q    -o    0    -o    1
        ...    -o    2    src/${package}    cwd=${PROJECT}
        Should Be Equal As Integers    ${compiled.rc}    0    ${compiled.stdout}${compiled.stderr}
    END

Store State
    [Documentation]    Fragment count and graph stats of a store (the project's by default).
    [Arguments]    ${store}=.contextpipe
    ${fragments}=    Fragments In The Store    ${store}
    ${result}=    Run contextpipe    --store    ${store}    graph    stats    --format    json
    ${stats}=    Evaluate    json.loads($result.stdout)    modules=json
    ${state}=    Create Dictionary    fragments=${fragments}    stats=${stats}
    RETURN    ${state}

Store Should Be At
    [Documentation]    Fails unless the project's store has the fragment count and graph of
    ...    the old or the new state, as EXPECTED says (`old`, `new` or `old or new`); returns
    ...    which.
    [Arguments]    ${expected}
    ${state}=    Store State
    IF    $state == $OLD
        ${found}=    Set Variable    old
    ELSE IF    $state == $NEW
        ${found}=    Set Variable    new
    ELSE
        Fail    the store is at neither state: ${state}\nold: ${OLD}\nnew: ${NEW}
    END
    Should Contain    ${expected}    ${found}    expected the ${expected} state, found the ${found}
    RETURN    ${found}

Kill An Index Run After
    [Documentation]    From the old state, starts `contextpipe index src`, kills it with SIGKILL
    ...    after DELAY seconds (unless it finished), then checks that queries and `graph stats`
    ...    work and the store is at the old or the new state. Returns what happened.
    [Arguments]    ${delay}
    Remove Directory    ${PROJECT}/.contextpipe    recursive=True
    Copy Directory    ${PROJECT}/old-store    ${PROJECT}/.contextpipe
    ${handle}=    Start Process    contextpipe    index    src    cwd=${PROJECT}
    ...    stdout=${PROJECT}/killed.out    stderr=${PROJECT}/killed.err
    Sleep    ${delay}
    # It may have finished just now: then there is nothing to kill.
    Run Keyword And Ignore Error    Send Signal To Process    SIGKILL    ${handle}    group=True
    ${result}=    Wait For Process    ${handle}    timeout=60s    on_timeout=kill
    Log Many    exit status ${result.rc}    stdout:\n${result.stdout}    stderr:\n${result.stderr}
    ${wal}=    Set Variable    ${PROJECT}/.contextpipe/index.sqlite3-wal
    ${wal_bytes}=    Run Keyword And Ignore Error    Get File Size    ${wal}
    ${wal_bytes}=    Set Variable If    "${wal_bytes}[0]" == "PASS"    ${wal_bytes}[1]    ${0}
    Should Be True    ${result.rc} in (0, -9)    unexpected exit status ${result.rc}
    ${found}=    Store Should Be At    old or new
    IF    ${result.rc} == 0    Should Be Equal    ${found}    new
    ${answer}=    Run contextpipe    query    json decoder scanner    --budget    400
    Should Not Be Empty    ${answer.stdout}
    ${outcome}=    Create Dictionary    delay=${delay}    killed=${{ $result.rc == -9 }}
    ...    wal_bytes=${wal_bytes}    state=${found}
    RETURN    ${outcome}
