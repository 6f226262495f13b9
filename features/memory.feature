Feature: Memory items: notes and conversations with a time and a scope
  An agent keeps what it learns as memory items: text with a timestamp, seen by one session,
  one user, or every request (`contextpipe remember "text" --session S --at TIME`,
  `Pipeline.remember`). Items are fragments like any other: searched, embedded, each a
  node `uko://memory/...` of its own, but no part of the graph every request shares. The
  store keeps a session's memory out of every other session's requests, whatever a
  strategy asks for, and re-indexing files never removes it.

  Background:
    Given a file "docs/guide.md" containing:
      """
      # Deployment

      The service is deployed with a blue-green switch every Tuesday.
      """
    And the project is indexed

  Scenario: A session's memory never reaches another session's request
    Given the memory items:
      | text                                          | session | user | at               |
      | Alice deploys the billing service on Fridays  | s-alice |      | 2024-05-07T10:00 |
      | Bob deploys the search service on Mondays     | s-bob   |      | 2024-05-07T11:00 |
      | Every service deploys through the gateway     |         |      | 2024-05-07T12:00 |
      | Carol deploys nothing without a review        |         | carol| 2024-05-07T13:00 |
    Then a request about "deploys service" sees exactly this memory, with each strategy alone and with the default mix:
      | session | user  | memory                                                                                     |
      | s-alice |       | Alice deploys the billing service on Fridays, Every service deploys through the gateway     |
      | s-bob   |       | Bob deploys the search service on Mondays, Every service deploys through the gateway        |
      |         |       | Every service deploys through the gateway                                                  |
      | s-bob   | carol | Bob deploys the search service on Mondays, Every service deploys through the gateway, Carol deploys nothing without a review |
    # The same process again, after more memory: what each request may not see is kept per
    # state of the store, so nothing remembered for a former state may let an item through.
    Given the memory items:
      | text                                          | session | user | at               |
      | Alice deploys the ledger service on Sundays   | s-alice |      | 2024-05-08T10:00 |
    Then a request about "deploys service" sees exactly this memory, with each strategy alone and with the default mix:
      | session | user  | memory                                                                                     |
      | s-bob   |       | Bob deploys the search service on Mondays, Every service deploys through the gateway        |
      |         |       | Every service deploys through the gateway                                                  |

  Scenario: A request naming a session in its filters and another as its session is refused
    When I ask for "deploys" within 300 tokens as session "s-alice" with filters of session "s-bob"
    Then the assembly fails with ContextpipeError saying "session 's-alice' differs from filters.session 's-bob'"

  Scenario: Memory survives re-indexing and forgetting files, and is forgotten by its scope
    Given the memory items:
      | text                                 | session | user | at               |
      | The release train leaves at noon     | s-1     |      | 2024-05-07T10:00 |
      | The release notes live in the wiki   | s-2     |      | 2024-05-07T11:00 |
    When the project is indexed again
    And the folder "docs" is forgotten
    Then a request about "release" as session "s-1" holds the memory "The release train leaves at noon"
    And the store counts 0 files
    When the memory of session "s-1" is forgotten
    Then a request about "release" as session "s-1" holds no memory
    And a request about "release" as session "s-2" holds the memory "The release notes live in the wiki"

  Scenario: Rebuilding the index keeps memory, pins and what each session was given
    # Files can be indexed again; memory, pins and session logs come from nowhere else.
    Given the memory items:
      | text                                 | session | user  | at               |
      | The release train leaves at noon     | s-1     |       | 2024-05-07T10:00 |
      | Carol signs the release notes        |         | carol | 2024-05-07T11:00 |
    And "docs/guide.md" is pinned
    And session "s-1" was given the answer to "release train"
    When the project is rebuilt
    Then the rebuild said "kept 2 memory items, 1 pin and "
    And a request about "release" as session "s-1" holds the memory "The release train leaves at noon"
    And the new store pins "docs/guide.md" and remembers what session "s-1" was given
    When I ask for "release notes" within 300 tokens as user "carol"
    Then the context holds 1 memory fragment

  Scenario Outline: A moved-aside store that is <damage> keeps what cannot be read, said in one line
    Given the memory items:
      | text                                 | session | user | at               |
      | The release train leaves at noon     | s-1     |      | 2024-05-07T10:00 |
    And "docs/guide.md" is pinned
    And the store's database is <damage>
    When the project is rebuilt
    Then the rebuild said "<kept>"
    And the rebuild said "<left>"
    And the moved folder holds the damaged database, byte for byte
    And a request about "release" as session "s-1" holds no memory

    Examples:
      | damage                      | kept                                              | left                                                                        |
      | overwritten with garbage    | memory, pins and session logs not kept:           | the old store cannot be read (file is not a database); they stay in         |
      | missing its fragments table | kept 0 memory items, 1 pin and 0 logged uses from | ; not kept: memory items (no such table: fragments); it stays there         |

  Scenario: Forgetting memory must name whose
    When memory is forgotten without naming a session, a user or global memory
    Then it fails saying "name one session, one user, or global memory to forget"

  Scenario: A memory item is a fragment with its time, and no part of the graph every request shares
    Given the memory items:
      | text                          | session | user | at                     | id    | speaker |
      | I moved the cron job to 6 am  | s-ops   |      | 2024-05-07T10:00+02:00 | ops-1 | Dana    |
    When I ask for "cron job" within 300 tokens as session "s-ops"
    Then the context holds a fragment of node "uko://memory/session/s-ops/ops-1" reading "[2024-05-07 08:00] Dana: I moved the cron job to 6 am", modified at "2024-05-07T08:00:00+00:00"
    And the graph knows nothing of "uko://memory/session/s-ops/ops-1": no node, no edge, no count

  Scenario: Two owners' items never take each other's place, whatever their owner and id strings
    # Owner and id were joined by '/' unescaped: team/alice's "ledger" and team's
    # "alice/ledger" were one stored item, the second replacing the first.
    Given the memory items:
      | text                                 | session    | user     | at               | id           |
      | Alice keeps the ledger in a binder   | team/alice |          | 2024-05-07T10:00 | ledger       |
      | The team ledger lives on the wiki    | team       |          | 2024-05-07T11:00 | alice/ledger |
      | Bob keeps the budget in a drawer     |            | team/bob | 2024-05-07T12:00 | budget       |
      | The team budget lives in the drive   |            | team     | 2024-05-07T13:00 | bob/budget   |
    And a conversation file "talk.json" with the turns:
      | id           | speaker | time                | text                                  |
      | bob/budget   | Ann     | 2024-05-08T10:00:00 | The imported budget note stays apart  |
    When the conversation "talk.json" is imported for the user "team"
    Then a request about "ledger budget" sees exactly this memory, with each strategy alone and with the default mix:
      | session    | user     | memory                                                                 |
      | team/alice |          | Alice keeps the ledger in a binder                                     |
      | team       |          | The team ledger lives on the wiki                                      |
      |            | team/bob | Bob keeps the budget in a drawer                                       |
      |            | team     | The imported budget note stays apart                                   |
    When the memory of session "team" is forgotten
    Then a request about "ledger" as session "team/alice" holds the memory "Alice keeps the ledger in a binder"

  Scenario: Indexing a file named like a memory item leaves the item alone
    # A file's stored path could equal a memory item's (`memory:session/s1/notes`), and
    # indexing it replaced the item, forgetting it removed the item.
    Given the memory items:
      | text                                 | session | user | at               | id    |
      | The vault code is in the safe        | s1      |      | 2024-05-07T10:00 | notes |
    And a file "memory:session/s1/notes" containing:
      """
      An ordinary file about the vault.
      """
    When the project is indexed again
    And the folder "memory:session" is forgotten
    Then a request about "vault" as session "s1" holds the memory "The vault code is in the safe"
    And the store counts 1 files

  Scenario: Naming another session's memory item as a focus does not reach it
    # A focus is resolved against the graph's names, where a memory node has a name too:
    # that must not become a way around the store's scope.
    Given the memory items:
      | text                                | session | user | at               | id      |
      | Alice keeps the vault key in a drawer | s-alice |      | 2024-05-07T10:00 | alice-1 |
    When session "s-bob" asks the navigator alone for "vault key" focused on "uko://memory/session/s-alice/alice-1"
    Then the context holds no memory
    When session "s-bob" asks the navigator alone for "vault key" focused on "memory alice-1"
    Then the context holds no memory

  Scenario: Memory of any year is kept, in order of time
    # Nanoseconds since 1970 overflowed outside 1677-2262: a traceback, and nothing kept.
    # Year 1 was shown as "[1-03-01 10:00]".
    Given the memory items:
      | text                                  | session | user | at               |
      | The charter of the guild was sealed   | s-1     |      | 1500-03-01T10:00 |
      | The guild charter is renewed again    | s-1     |      | 2300-03-01T10:00 |
      | The guild drafts its first charter    | s-1     |      | 0001-03-01T10:00 |
    When I ask for "guild charter" within 500 tokens as session "s-1"
    Then the context holds 3 memory fragment
    And the context holds a memory text reading "[0001-03-01 10:00] The guild drafts its first charter"
    And the newest memory of session "s-1" reads "[2300-03-01 10:00] The guild charter is renewed again"

  Scenario: The last hour of year 9999 is a time like any other
    # The turns said after a memory hit were looked for until ten minutes past it: beyond
    # year 9999, an OverflowError for relevance.
    Given a conversation file "talk.json" with the turns:
      | id   | speaker | time                | text                                |
      | D1:1 | Ann     | 9999-12-31T23:55:00 | The vault opens at the end of time  |
      | D1:2 | Ben     | 9999-12-31T23:56:00 | Then we had better be early         |
    When the conversation "talk.json" is imported for the user "ann"
    And the pipeline is reopened with the setting "embedding.model" at "wordllama"
    And the vectors are computed
    And I ask as of "9999-12-31T23:59:59" for "vault opens" within 500 tokens as user "ann"
    Then the context holds 2 memory fragment
    And the report of "relevance" says ok

  Scenario Outline: A time beyond years 1-9999 in UTC is refused in one line
    # 9999-12-31T23:00-05:00 is in year 10000 in UTC: remembering it gave an OverflowError
    # traceback, and a request as of 0001-01-01T00:00+05:00 an error in four strategies.
    When <what> at "<moment>"
    Then it fails saying "<said>"

    Examples:
      | what                                     | moment                    | said                                                        |
      | a memory item is remembered for "s-1"    | 9999-12-31T23:00:00-05:00 | a memory item's time 9999-12-31T23:00:00-05:00 is outside years 1-9999 in UTC |
      | a request of session "s-1" is made       | 0001-01-01T00:00:00+05:00 | 0001-01-01T00:00:00+05:00 is outside years 1-9999 in UTC   |

  Scenario: Remembering the same item twice keeps it once
    Given the memory items:
      | text                    | session | user | at               |
      | The cache TTL is 5 min  | s-1     |      | 2024-05-07T10:00 |
      | The cache TTL is 5 min  | s-1     |      | 2024-05-07T10:00 |
    When I ask for "cache TTL" within 300 tokens as session "s-1"
    Then the context holds 1 memory fragment

  Scenario: A conversation is imported with one fragment per turn that keeps its id
    Given a conversation file "talk.json" with the turns:
      | id   | speaker | time                | text                                      |
      | D1:1 | Ann     | 2024-05-07T10:00:00 | I adopted a greyhound called Pixel.        |
      | D1:2 | Ben     | 2024-05-07T10:01:00 | Lovely! Greyhounds need long walks.        |
      | D2:1 | Ann     | 2024-06-01T09:00:00 | Pixel won a race at the park today.        |
    When the conversation "talk.json" is imported for the user "ann"
    And I ask for "greyhound Pixel race" within 500 tokens as user "ann"
    Then the memory in the context is from the nodes "uko://memory/user/ann/D1%3A1, uko://memory/user/ann/D1%3A2, uko://memory/user/ann/D2%3A1" in some order

  Scenario Outline: A conversation file with a mistake is refused in one line naming the turn
    Given a conversation file "talk.json" reading:
      """
      <content>
      """
    When the conversation "talk.json" is imported for the user "ann"
    Then it fails saying "<message>"

    Examples:
      | content                                                                   | message                                                  |
      | {"id": "D1:1"}                                                            | talk.json: expected a JSON list of turns                 |
      | [{"id": "D1:1", "speaker": "Ann", "time": "2024-05-07", "text": ""}]        | talk.json: turn 1: "text" must be a non-empty string     |
      | [{"id": "D1:1", "speaker": "Ann", "time": "May 7th", "text": "hi"}]         | talk.json: turn 1: "time" 'May 7th' is not an ISO 8601 time |
      | [{"id": "a", "speaker": "A", "time": "2024-05-07", "text": "x"}, {"id": "a", "speaker": "A", "time": "2024-05-07", "text": "y"}] | talk.json: turn 2: "id" 'a' appears twice |

  Scenario: A store of layout 11 moves its memory under the items' node URIs on the next write, keeping every item
    Given the memory items:
      | text                                 | session    | user | at               | id     |
      | Alice keeps the ledger in a binder   | team/alice |      | 2024-05-07T10:00 | ledger |
      | Everyone signs the ledger on Monday  |            |      | 2024-05-07T11:00 | sign   |
    And the store is turned back into layout 11, as the previous version wrote it
    When I ask for "ledger" within 400 tokens
    Then the assembly fails with StoreError saying "index has layout 11, this contextpipe reads 13; run `contextpipe index PATH` to upgrade or rebuild it"
    Given the memory items:
      | text                                 | session | user | at               | id     |
      | The team ledger lives on the wiki    | team    |      | 2024-05-07T12:00 | alice/ledger |
    Then a request about "ledger" sees exactly this memory, with each strategy alone and with the default mix:
      | session    | user | memory                                                                   |
      | team/alice |      | Alice keeps the ledger in a binder, Everyone signs the ledger on Monday |
      | team       |      | The team ledger lives on the wiki, Everyone signs the ledger on Monday  |
    And every memory item is stored under its node URI

  Scenario: A store of layout 8 is upgraded in place by the next write, keeping every file
    Given the store is turned back into layout 8, as the previous version wrote it
    When I ask for "deployed" within 400 tokens
    Then the assembly fails with StoreError saying "index has layout 8, this contextpipe reads 13; run `contextpipe index PATH` to upgrade or rebuild it"
    Given the memory items:
      | text                              | session | user | at               |
      | The switch is flipped by Dana     | s-1     |      | 2024-05-07T10:00 |
    When I index the project
    Then the index summary counts:
      | what          | count |
      | files indexed | 0     |
    And a request about "switch deployed" as session "s-1" holds the memory "The switch is flipped by Dana"
    And the store counts 1 files
