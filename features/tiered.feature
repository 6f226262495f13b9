Feature: The tiered strategy fills hot, then warm, then cold memory
  `tiered` fills its share of the budget in tiers: hot (pinned items — `[memory] pinned`
  globs or URIs and `contextpipe pin` — and the files the request's focus names), warm
  (what matches the request and was delivered to this session lately, or added to this
  session's memory lately), then cold (long-term search, which other strategies run too:
  in a mix its votes count only for what they did not propose). Each reason names its
  tier. The store keeps a bounded log of what each session was given.

  Background:
    Given a file "docs/pinned.md" containing:
      """
      # House rules

      Always answer in English.
      """
    And a file "docs/used.md" containing:
      """
      # Rollback

      A rollback restores the previous release.
      """
    And a file "docs/cold.md" containing:
      """
      # Releases

      A release is cut every second Tuesday.
      """

  Scenario: Hot comes before warm before cold, and each reason names its tier
    Given the project is indexed
    And "docs/pinned.md" is pinned
    And session "s-1" was given the answer to "rollback"
    When session "s-1" asks tiered alone for "release"
    Then tiered proposes "docs/pinned.md, docs/used.md, docs/cold.md" in this order, in the tiers "hot, warm, cold"
    And tiered's reasons are:
      | path           | reason                                                 |
      | docs/pinned.md | hot: pinned                                            |
      | docs/used.md   | warm: used lately by this session                      |
      | docs/cold.md   | cold: long-term search, BM25 matched release           |

  Scenario: Another session's use is not warm for this one
    Given the project is indexed
    And session "s-1" was given the answer to "rollback"
    When session "s-2" asks tiered alone for "release"
    Then tiered proposes "docs/cold.md, docs/used.md" in this order, in the tiers "cold, cold"

  Scenario: Pins from the config file are hot too, and unpinning takes a pin back
    Given the project config file:
      """
      [memory]
      pinned = ["docs/pin*.md"]
      """
    And the project is indexed
    And "uko://doc/docs/used.md#rollback" is pinned
    When session "s-1" asks tiered alone for "release"
    Then tiered proposes "docs/pinned.md, docs/used.md" first, in the tiers "hot, hot"
    When "uko://doc/docs/used.md#rollback" is unpinned
    And session "s-1" asks tiered alone for "release"
    Then tiered proposes "docs/pinned.md" first, in the tiers "hot"

  Scenario: The files a request's focus names are its hot working set
    Given the project is indexed
    When session "s-1" asks tiered alone for "release" with the focus "docs/used.md"
    Then tiered proposes "docs/used.md, docs/cold.md" first, in the tiers "hot, cold"
    And tiered's reasons are:
      | path         | reason                        |
      | docs/used.md | hot: in the request's focus   |

  Scenario: Recent memory that search finds is warm
    Given the project is indexed
    And the memory items:
      | text                                     | session | user | at               |
      | The next release slipped to Wednesday    | s-1     |      | 2024-05-30T10:00 |
    When session "s-1" asks tiered alone for "release"
    Then tiered proposes "uko://memory/session/s-1/*, docs/cold.md" first, in the tiers "warm, cold"

  Scenario: A user's memory, however recent, was not said in this session: it is cold
    Given the project is indexed
    And the memory items:
      | text                                     | session | user | at               |
      | The next release slipped to Wednesday    |         | u-1  | 2024-05-30T10:00 |
    When session "s-1" of user "u-1" asks tiered alone for "release"
    Then tiered puts the memory in the tiers "cold"

  Scenario: The cold tier repeats long-term search, so its candidates are echoes
    Given the project is indexed
    And "docs/pinned.md" is pinned
    And session "s-1" was given the answer to "rollback"
    When session "s-1" asks tiered alone for "release"
    Then tiered's cold candidates, and only they, are echoes of long-term search

  Scenario: The access log keeps only the session's last assemblies
    Given the setting "memory.access_log_assemblies" is 1
    And the project is indexed
    And session "s-1" was given the answer to "rollback"
    And session "s-1" was given the answer to "house rules"
    When session "s-1" asks tiered alone for "release"
    Then tiered proposes "docs/cold.md, docs/used.md" in this order, in the tiers "cold, cold"

  Scenario: A session's request answers while an index run holds the store, unlogged; later ones are logged again
    Given the project is indexed
    And an index run holds the store
    And session "s-1" was given the answer to "rollback"
    And the index run is done
    When session "s-1" asks tiered alone for "release"
    Then tiered proposes "docs/cold.md, docs/used.md" in this order, in the tiers "cold, cold"
    Given session "s-1" was given the answer to "rollback"
    When session "s-1" asks tiered alone for "release"
    Then tiered proposes "docs/used.md, docs/cold.md" in this order, in the tiers "warm, cold"

  Scenario: Logging a session's use inside a read of one snapshot leaves that read as it was
    Given the project is indexed
    When session "s-1"'s use of "uko://doc/docs/used.md#rollback" is logged while the thread reads one snapshot
    Then the snapshot read ended as it began
    When session "s-1" asks tiered alone for "release"
    Then tiered proposes "docs/cold.md, docs/used.md" in this order, in the tiers "cold, cold"

  Scenario: What the session used lately but beside the point of the request is not warm
    Given the project is indexed
    And session "s-1" was given the answer to "house rules"
    When session "s-1" asks tiered alone for "release"
    Then tiered proposes "docs/cold.md, docs/used.md" in this order, in the tiers "cold, cold"

  Scenario: In a session's default mix, tiered's long-term search is the keyword strategies' search
    Given the project is indexed
    And the store's text searches are counted
    When I ask for "release" within 500 tokens as session "s-1"
    Then the report of "tiered" says ok
    And the report of "simple-keyword" says ok
    And the store's text index was searched 1 time

  Scenario: Tiered searches long-term memory once more only when its first page cannot fill its share
    Given a document "docs/notes.md" with 400 short sections about budgets
    And the project is indexed
    And the store's text searches are counted
    When session "s-1" asks tiered alone for "budgets" within 300 tokens
    Then the store's text index was searched 1 time
    When session "s-1" asks tiered alone for "budgets" within 8000 tokens
    Then the store's text index was searched 3 times
    And tiered proposes more than 50 candidates in the tier "cold"

  Scenario: Without a session, focus or pins there is nothing hot or warm: tiered declines
    Given the project is indexed
    When I ask for "release" within 500 tokens using only the strategy "tiered"
    Then the report of "tiered" says skipped with a reason mentioning "can_handle returned 0"

  Scenario: Only recent memory among the best matches is warm
    Given the project is indexed
    And the memory items:
      | text                                              | session | user | at               |
      | The release checklist: release notes, release tag | s-1     |      | 2024-05-20T10:00 |
      | Someone asked about a release at lunch            | s-1     |      | 2024-05-30T10:00 |
    When session "s-1" asks tiered alone for "release checklist" with warm items among the best 1
    Then tiered puts the memory in the tiers "warm, cold"
    When session "s-1" asks tiered alone for "release checklist" with warm items among the best 10
    Then tiered puts the memory in the tiers "warm, warm"
