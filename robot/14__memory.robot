*** Settings ***
Documentation       Memory through the command line, as an agent would use it: `remember` a
...                 note for a session, `import` a conversation for a user, `pin` a file,
...                 `forget-memory`, and `query` as a session or user: a session's memory never
...                 reaches another session, re-indexing files keeps it, and mistakes are one
...                 line naming what to fix.
Resource            resources/contextpipe.resource
Suite Setup         A Project With The Example Documents Indexed
Suite Teardown      Remove The Project Folder


*** Test Cases ***
A Session's Memory Reaches Only That Session's Queries
    ${out}=    Run contextpipe    remember    The allocator budget for alpha is 900 tokens
    ...    --session    alpha    --at    2024-05-07T10:00
    Should Contain    ${out.stdout}    remembered
    Should Contain    ${out.stdout}    (session alpha, 2024-05-07T10:00:00+00:00)
    Run contextpipe    remember    The allocator budget for beta is 300 tokens
    ...    --session    beta    --at    2024-05-08T10:00
    ${alpha}=    Memory Texts Of A Query    allocator budget    --session    alpha
    Should Be Equal    ${alpha}    ${{ ["[2024-05-07 10:00] The allocator budget for alpha is 900 tokens"] }}
    ${beta}=    Memory Texts Of A Query    allocator budget    --session    beta
    Should Be Equal    ${beta}    ${{ ["[2024-05-08 10:00] The allocator budget for beta is 300 tokens"] }}
    ${nobody}=    Memory Texts Of A Query    allocator budget
    Should Be Empty    ${nobody}

Re-indexing The Files Keeps The Memory, And forget-memory Takes A Session's Away
    Run contextpipe    remember    The gamma team packs with care    --session    gamma
    Run contextpipe    index    docs/
    ${kept}=    Memory Texts Of A Query    gamma team packs    --session    gamma
    Length Should Be    ${kept}    1
    ${out}=    Run contextpipe    forget-memory    --session    gamma
    Should Contain    ${out.stdout}    forgot 1 memory items
    ${gone}=    Memory Texts Of A Query    gamma team packs    --session    gamma
    Should Be Empty    ${gone}

A Conversation Is Imported As A User's Memory, One Fragment Per Turn With Its Id
    ${turns}=    Catenate
    ...    [{"id": "D1:1", "speaker": "Ann", "time": "2024-05-07T10:00", "text": "I adopted a greyhound called Pixel."},
    ...    {"id": "D1:2", "speaker": "Ben", "time": "2024-05-07T10:01", "text": "Greyhounds need long walks."}]
    Create File    ${PROJECT}/talk.json    ${turns}
    ${out}=    Run contextpipe    import    talk.json    --user    ann
    Should Contain    ${out.stdout}    talk.json: remembered 2 turns
    ${context}=    Query As JSON    greyhound Pixel walks    1000    --user    ann
    ${uris}=    Evaluate    sorted(f["uko_uri"] for f in $context["fragments"] if f["source"]["kind"] == "memory")
    Should Be Equal    ${uris}    ${{ ["uko://memory/user/ann/D1%3A1", "uko://memory/user/ann/D1%3A2"] }}
    ${other}=    Memory Texts Of A Query    greyhound Pixel walks    --user    bob
    Should Be Empty    ${other}

An Imported Answer Is Found By The Words Of The Question Before It, And Shown As Said
    ${turns}=    Catenate
    ...    [{"id": "q", "speaker": "Cat", "time": "2024-06-01T09:00", "text": "Which ferry goes to the lighthouse island?"},
    ...    {"id": "a", "speaker": "Dev", "time": "2024-06-01T09:01", "text": "The blue one at seven, from pier four."}]
    Create File    ${PROJECT}/ferry.json    ${turns}
    Run contextpipe    import    ferry.json    --user    cat
    ${context}=    Query As JSON    lighthouse island ferry    1000    --user    cat
    ...    --strategy    simple-keyword
    ${texts}=    Evaluate    [f["text"] for f in $context["fragments"] if f["source"]["kind"] == "memory"]
    Should Contain    ${texts}    [2024-06-01 09:01] Dev: The blue one at seven, from pier four.

A Conversation File With A Mistake Stops With One Line Naming The Turn And Key
    Create File    ${PROJECT}/bad.json    [{"id": "D1:1", "speaker": "Ann", "time": "yesterday", "text": "hi"}]
    ${error}=    Run contextpipe And Expect Failure    import    bad.json    --session    s
    Should Contain    ${error}    bad.json: turn 1: "time" 'yesterday' is not an ISO 8601 time

A Bad Time Or Two Owners Stop With One Line
    ${error}=    Run contextpipe And Expect Failure    remember    note    --at    tuesday
    Should Contain    ${error}    --at: 'tuesday' is not an ISO 8601 time
    # A time of year 9999 or 1 that its zone puts beyond them in UTC gave a traceback.
    ${error}=    Run contextpipe And Expect Failure    remember    note    --at    9999-12-31T23:00:00-05:00
    Should Be Equal    ${error}    contextpipe: error: --at: '9999-12-31T23:00:00-05:00' is outside years 1-9999 in UTC
    ${error}=    Run contextpipe And Expect Failure    query    note    --as-of    0001-01-01T00:00:00+05:00
    Should Be Equal    ${error}    contextpipe: error: --as-of: '0001-01-01T00:00:00+05:00' is outside years 1-9999 in UTC
    ${error}=    Run contextpipe And Expect Failure    remember    note    --session    s    --user    u
    Should Contain    ${error}    a memory item belongs to a session or a user, not both
    ${error}=    Run contextpipe And Expect Failure    forget-memory
    Should Contain    ${error}    name one session, one user, or global memory to forget

A Pinned File Is The Hot Tier Of Every Session's Query Until It Is Unpinned
    ${out}=    Run contextpipe    pin    docs/notes.txt
    Should Contain    ${out.stdout}    pinned docs/notes.txt
    ${context}=    Query As JSON    packer budget    2000    --session    pins    --strategy    tiered
    ${first}=    Set Variable    ${context}[fragments][0]
    Should Be Equal    ${first}[source][path]    docs/notes.txt
    Should Be Equal    ${first}[provenance][0][reason]    hot: pinned
    ${out}=    Run contextpipe    unpin    docs/notes.txt
    Should Contain    ${out.stdout}    unpinned docs/notes.txt
    ${context}=    Query As JSON    packer budget    2000    --session    pins    --strategy    tiered
    ${reasons}=    Evaluate    [p["reason"] for f in $context["fragments"] for p in f["provenance"]]
    Should Not Contain    ${reasons}    hot: pinned


A Query As Of An Earlier Time Leaves Out Later Memory And Weighs By Age
    Run contextpipe    remember    The kiln fires at 900 degrees    --session    times
    ...    --at    2024-05-01T10:00    --id    early
    Run contextpipe    remember    The kiln fires at 1200 degrees now    --session    times
    ...    --at    2024-05-20T10:00    --id    late
    ${context}=    Query As JSON    latest kiln fires    2000    --session    times
    ...    --strategy    recency    --as-of    2024-05-10T00:00
    ${uris}=    Evaluate    [f["uko_uri"] for f in $context["fragments"]]
    Should Be Equal    ${uris}    ${{ ["uko://memory/session/times/early"] }}
    ${context}=    Query As JSON    latest kiln fires    2000    --session    times
    ...    --strategy    recency    --as-of    2024-05-31T00:00
    ${reasons}=    Evaluate    [f["provenance"][0]["reason"] for f in $context["fragments"]]
    Should Start With    ${reasons}[0]    from 2024-05-20 10:00, the newest match
    Should Start With    ${reasons}[1]    from 2024-05-01 10:00, 19.0 days before the newest match
    ${error}=    Run contextpipe And Expect Failure    query    kiln    --as-of    soon
    Should Contain    ${error}    --as-of: 'soon' is not an ISO 8601 time


Rebuilding The Index Keeps The Memory And Says What It Kept
    Run contextpipe    remember    The delta crew rotates the keys on Sundays    --session    delta
    ...    --at    2024-07-01T09:00
    ${out}=    Run contextpipe    index    --rebuild    docs/
    ${moved}=    Should Match Regexp    ${out.stdout}
    ...    (?m)^moved the store aside to (.*/\\.contextpipe\\.previous-\\d{8}T\\d{6}Z); indexing
    Should Match Regexp    ${out.stdout}    (?m)^kept \\d+ memory items, \\d+ pins? and \\d+ logged uses? from
    Should Contain    ${out.stdout}    logged uses from ${moved}[1]\n
    ${kept}=    Memory Texts Of A Query    delta crew keys    --session    delta
    Should Be Equal    ${kept}    ${{ ["[2024-07-01 09:00] The delta crew rotates the keys on Sundays"] }}


*** Keywords ***
Memory Texts Of A Query
    [Documentation]    The texts of the memory fragments `query QUERY --format json` gives.
    [Arguments]    ${query}    @{more}
    ${context}=    Query As JSON    ${query}    2000    @{more}
    ${texts}=    Evaluate    [f["text"] for f in $context["fragments"] if f["source"]["kind"] == "memory"]
    RETURN    ${texts}
