*** Settings ***
Documentation       `contextpipe index` killed with SIGKILL at any moment leaves every file at its
...                 old state or its new one, never broken: queries and `graph stats` still work,
...                 no process of the killed run is left behind, and indexing again redoes only
...                 the files that were not committed. The folder is a copy of standard library
...                 packages with their compiled files (over 1,000 files, more than enough text
...                 for the indexer's worker processes), so that a run takes seconds and, off a
...                 terminal, logs progress lines. Runs commit every quarter of a second here, so
...                 that a run of a few seconds commits many times. A damaged store is reported
...                 in one line by every command, and `index --rebuild` moves it aside.
Library             resources/StoreStates.py
Resource            resources/contextpipe.resource
Suite Setup         An Indexed Folder, Then A Larger Changed One With Its Reference Index
Suite Teardown      Remove The Project Folder


*** Variables ***
@{OLD_PACKAGES}         json    email
@{ADDED_PACKAGES}       encodings    asyncio    xml    importlib    multiprocessing    concurrent
...                     unittest    pydoc_data
# When to kill, as fractions of the time a full index of the new folder takes (start-up
# included): during start-up, the walk, the writing, and near the end.
@{KILL_AT}              0.15    0.35    0.5    0.7    0.9
${COMMIT_SECONDS}       0.25


*** Test Cases ***
Indexing More Than 1,000 Files Off A Terminal Logs Progress Lines On Stderr
    ${seen}=    Should Match Regexp    ${REFERENCE_RUN.stdout}    (\\d+) files seen
    ${total}=    Convert To Integer    ${seen}[1]
    Should Be True    ${total} > 1000    only ${total} files: the progress test needs more
    ${lines}=    Get Regexp Matches    ${REFERENCE_RUN.stderr}
    ...    (?m)^.*/src: (\\d+)/${total} files \\(\\d+ files/s\\)$    1
    ${expected}=    Evaluate    [str(n) for n in range(1000, ${total} + 1, 1000)]
    Should Be Equal    ${lines}    ${expected}    stderr:\n${REFERENCE_RUN.stderr}
    Should Not Contain    ${REFERENCE_RUN.stdout}    files/s

Killing Index At Any Moment Leaves Each File Old Or New, Leaves No Process, And Resumes
    [Documentation]    Each kill hits the indexer's process alone, as the OOM killer or
    ...    `kill -9 PID` would: its workers must notice and exit by themselves.
    ${outcomes}=    Create List
    FOR    ${fraction}    IN    @{KILL_AT}
        ${delay}=    Evaluate    round(${fraction} * ${FULL_INDEX_SECONDS}, 2)
        ${outcome}=    Kill An Index Run After    ${delay}
        Append To List    ${outcomes}    ${outcome}
    END
    Log List    ${outcomes}
    ${with_workers}=    Evaluate    [o for o in $outcomes if o["killed"] and o["processes"] > 2]
    Should Not Be Empty    ${with_workers}
    ...    no run was killed while its worker processes ran: ${outcomes}
    ${mixed}=    Evaluate    [o for o in $outcomes if o["killed"] and o["old"] and o["new"]]
    Should Not Be Empty    ${mixed}
    ...    no run was killed between two commits (some files old, some new): ${outcomes}
    # One transaction for the whole run would grow the log to about the size of the index.
    ${wal}=    Evaluate    max(o["max_wal_bytes"] for o in $outcomes)
    ${limit}=    Evaluate    ${NEW}[database_bytes] // 3
    Should Be True    ${wal} < ${limit}
    ...    the write-ahead log grew to ${wal} bytes, a third of the whole index is ${limit}

Indexing Again After The Kills Completes With The New State
    ${result}=    Run contextpipe    index    src
    Should Match Regexp    ${result.stdout}    \\d+ files seen, \\d+ indexed
    Store Should Be At New State
    ${result}=    Run contextpipe    index    src
    Should Contain    ${result.stdout}    0 indexed
    Should Contain    ${result.stdout}    0 fragments written

Every Command Reports A Damaged Store In One Line And Says What To Run
    [Template]    Every Command Reports The Store Damaged
    cut to its first page    truncated: 4,096 of
    cut in half    truncated:
    overwritten with garbage    not an SQLite database
    missing its fragments table    table fragments is missing

Rebuilding Moves The Damaged Store Aside And Indexes Anew
    The Old Store With Its Database    cut in half
    ${damaged}=    Get Binary File    ${PROJECT}/.contextpipe/index.sqlite3
    ${result}=    Run contextpipe    index    --rebuild    src
    ${moved}=    Should Match Regexp    ${result.stdout}
    ...    (?m)^moved the store aside to (.*/\\.contextpipe\\.damaged-\\d{8}T\\d{6}Z); indexing
    ${kept}=    Get Binary File    ${moved}[1]/index.sqlite3
    Should Be True    $kept == $damaged    the moved database is not the damaged one as it was
    Should Match Regexp    ${result.stdout}    \\d+ files seen, \\d+ indexed
    Store Should Be At New State
    ${answer}=    Run contextpipe    query    json decoder scanner    --budget    400
    Should Not Be Empty    ${answer.stdout}

An Interrupted First Index Says So
    Remove Directory    ${PROJECT}/.contextpipe    recursive=True
    Create Directory    ${PROJECT}/.contextpipe
    ${created}=    Run Process    python    -c
    ...    import sqlite3; sqlite3.connect(".contextpipe/index.sqlite3").execute("PRAGMA journal_mode \= WAL")
    ...    cwd=${PROJECT}
    Should Be Equal As Integers    ${created.rc}    0    ${created.stderr}
    ${error}=    Run contextpipe And Expect Failure    query    json decoder
    Should Contain    ${error}    the first index was interrupted before it saved anything
    Should Contain    ${error}    run `contextpipe index PATH` again
    Run contextpipe    index    src
    Store Should Be At New State


*** Keywords ***
An Indexed Folder, Then A Larger Changed One With Its Reference Index
    [Documentation]    The old state: `json` and `email` in src/, indexed into the project's
    ...    store, which is kept in old-store/. The new state: src/ with json/tool.py deleted,
    ...    json/scanner.py edited and more packages added, fully indexed into reference-store/
    ...    (same project folder, so the same paths): how long it took. The two states must
    ...    differ, or the kill test could not tell them apart.
    A Fresh Project Folder
    # Vectors are off here: at 8,000 texts they would take minutes, and their own crash
    # safety (a killed run resumes) is a scenario of features/semantic_search.feature.
    A Config File With    [ingest]    commit_seconds = ${COMMIT_SECONDS}    [embedding]    enabled = false
    ${found}=    Run Process    python    -c    import sysconfig; print(sysconfig.get_paths()["stdlib"])
    Should Be Equal As Integers    ${found.rc}    0    ${found.stderr}
    ${stdlib}=    Set Variable    ${found.stdout.strip()}
    Copy Packages    ${stdlib}    @{OLD_PACKAGES}
    Run contextpipe    index    src
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
    ${old}=    Store State    old-store
    ${new}=    Store State    reference-store
    Should Be True    ${old}[fragments] < ${new}[fragments]
    Should Not Be Equal    ${old}[stats]    ${new}[stats]
    Set Suite Variable    ${OLD}    ${old}
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
    [Documentation]    Fragment count, graph stats and database size of a store (the
    ...    project's by default).
    [Arguments]    ${store}=.contextpipe
    ${fragments}=    Fragments In The Store    ${store}
    ${result}=    Run contextpipe    --store    ${store}    graph    stats    --format    json
    ${stats}=    Evaluate    json.loads($result.stdout)    modules=json
    ${size}=    Get File Size    ${PROJECT}/${store}/index.sqlite3
    ${state}=    Create Dictionary    fragments=${fragments}    stats=${stats}
    ...    database_bytes=${size}
    RETURN    ${state}

Store Should Be At New State
    [Documentation]    Every file of the project's store is as in the reference store, and
    ...    `graph stats` counts the same.
    ${files}=    Files Should Be At Old Or New State
    ...    ${PROJECT}/.contextpipe    ${PROJECT}/old-store    ${PROJECT}/reference-store
    Should Be Equal As Integers    ${files}[old]    0    files still at the old state: ${files}
    ${result}=    Run contextpipe    graph    stats    --format    json
    ${stats}=    Evaluate    json.loads($result.stdout)    modules=json
    Should Be Equal    ${stats}    ${NEW}[stats]

Kill An Index Run After
    [Documentation]    From the old state, starts `contextpipe index src`, watches the size of
    ...    the write-ahead log, and after DELAY seconds (unless it finished) kills the indexer's
    ...    process alone with SIGKILL. Then: no process of the run may be left (its workers
    ...    exit the moment it is gone; 30 s are allowed for a busy machine to schedule them),
    ...    its stderr may hold progress lines only (no warning, no traceback), every file must
    ...    be at its old or its new state, queries and `graph stats` must work, and indexing
    ...    again must index exactly the text files still at the old state and end at the new
    ...    state. Returns what happened.
    [Arguments]    ${delay}
    Remove Directory    ${PROJECT}/.contextpipe    recursive=True
    Copy Directory    ${PROJECT}/old-store    ${PROJECT}/.contextpipe
    ${handle}=    Start Process    contextpipe    index    src    cwd=${PROJECT}
    ...    stdout=${PROJECT}/killed.out    stderr=${PROJECT}/killed.err
    ${pid}=    Get Process Id    ${handle}
    ${max_wal}=    Largest Write-Ahead Log During    ${delay}    ${handle}
    ${processes}=    Processes In Group    ${pid}
    ${count}=    Get Length    ${processes}
    # It may have finished just now: then there is nothing to kill.
    Run Keyword And Ignore Error    Send Signal To Process    SIGKILL    ${handle}
    ${result}=    Wait For Process    ${handle}    timeout=60s    on_timeout=kill
    Log Many    exit status ${result.rc}    stdout:\n${result.stdout}    stderr:\n${result.stderr}
    Should Be True    ${result.rc} in (0, -9)    unexpected exit status ${result.rc}
    Wait Until Keyword Succeeds    30s    0.2s    No Process Should Be Left In Group    ${pid}
    # What the run's processes wrote last, after the indexer was gone, is there now.
    ${stderr}=    Get File    ${PROJECT}/killed.err
    ${other}=    Get Regexp Matches    ${stderr}    (?m)^(?!.*/src: \\d+/\\d+ files \\(\\d+ files/s\\)$).+$
    Should Be Empty    ${other}    the killed run wrote more than progress on stderr:\n${stderr}
    ${files}=    Files Should Be At Old Or New State
    ...    ${PROJECT}/.contextpipe    ${PROJECT}/old-store    ${PROJECT}/reference-store
    IF    ${result.rc} == 0
        Should Be Equal As Integers    ${files}[old]    0    finished, yet files are old: ${files}
    END
    ${answer}=    Run contextpipe    query    json decoder scanner    --budget    400
    Should Not Be Empty    ${answer.stdout}
    Run contextpipe    graph    stats
    ${rerun}=    Run contextpipe    index    src
    ${done}=    Should Match Regexp    ${rerun.stdout}
    ...    \\d+ files seen, (\\d+) indexed, \\d+ unchanged, (\\d+) removed
    Should Be Equal As Integers    ${done}[1]    ${files}[pending_text]
    ...    the run after the kill indexed ${done}[1] files; ${files}[pending_text] were not done
    Should Be Equal As Integers    ${done}[2]    ${files}[pending_removal]
    Store Should Be At New State
    ${outcome}=    Create Dictionary    delay=${delay}    killed=${{ $result.rc == -9 }}
    ...    processes=${count}    max_wal_bytes=${max_wal}    old=${files}[old]
    ...    new=${files}[new]    redone=${{ int($done[1]) }}
    RETURN    ${outcome}

Largest Write-Ahead Log During
    [Documentation]    The largest size the project store's write-ahead log had while the
    ...    process HANDLE ran, watched for SECONDS (or until it ended).
    [Arguments]    ${seconds}    ${handle}
    ${wal}=    Set Variable    ${PROJECT}/.contextpipe/index.sqlite3-wal
    ${largest}=    Set Variable    ${0}
    ${until}=    Evaluate    time.monotonic() + ${seconds}    modules=time
    WHILE    time.monotonic() < ${until}    limit=NONE
        ${size}=    Evaluate    os.path.getsize($wal) if os.path.exists($wal) else 0    modules=os
        ${largest}=    Evaluate    max(${largest}, ${size})
        ${running}=    Is Process Running    ${handle}
        IF    not ${running}    BREAK
        Sleep    0.05s
    END
    RETURN    ${largest}

No Process Should Be Left In Group
    [Arguments]    ${group}
    ${left}=    Processes In Group    ${group}
    Should Be Empty    ${left}    processes of the killed run are still there: ${left}

The Old Store With Its Database
    [Documentation]    The project's store is a copy of the old one, damaged as DAMAGE says.
    [Arguments]    ${damage}
    Remove Directory    ${PROJECT}/.contextpipe    recursive=True
    Copy Directory    ${PROJECT}/old-store    ${PROJECT}/.contextpipe
    ${database}=    Set Variable    ${PROJECT}/.contextpipe/index.sqlite3
    IF    $damage == "cut to its first page"
        Evaluate    os.truncate($database, 4096)    modules=os
    ELSE IF    $damage == "cut in half"
        Evaluate    os.truncate($database, os.path.getsize($database) // 2)    modules=os
    ELSE IF    $damage == "overwritten with garbage"
        Create Binary File    ${database}    ${{ bytes(range(256)).decode("latin-1") * 64 }}
    ELSE
        ${dropped}=    Run Process    python    -c
        ...    import sqlite3; c \= sqlite3.connect(".contextpipe/index.sqlite3"); c.execute("DROP TABLE fragments"); c.commit()
        ...    cwd=${PROJECT}
        Should Be Equal As Integers    ${dropped.rc}    0    ${dropped.stderr}
    END

Every Command Reports The Store Damaged
    [Documentation]    `query`, `graph stats`, `graph show` and `index` each fail with one
    ...    line naming the database, what is wrong and `index --rebuild`.
    [Arguments]    ${damage}    ${what}
    The Old Store With Its Database    ${damage}
    FOR    ${command}    IN    query json    graph stats    graph show uko://code/src/json/decoder.py
    ...    index src
        @{words}=    Split String    ${command}
        ${error}=    Run contextpipe And Expect Failure    @{words}
        Should Contain    ${error}    .contextpipe/index.sqlite3: damaged (${what}
        Should Contain    ${error}    run `contextpipe index --rebuild PATH`
        Should Not Contain    ${error}    Traceback
    END
