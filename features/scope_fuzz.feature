Feature: Fuzzing a plugin's reach: another scope's memory is never read
  A request's scope (its session and user) is fixed when the pipeline opens the request's
  read views, and the store holds every read to it: a strategy's filters can only narrow
  it. Hypothesis generates strategies that call every read method the capabilities offer
  (fragment lookups, counts and token counts, text search and scores, the timeline, the
  session tiers and the access log, vector search and similarities, the graph) with the
  request's filters widened or replaced (another session, another user, no scope, globs
  over memory's paths, old and new, the memory kind, all of these at once), with guessed
  ids, URIs and content hashes of other scopes' items, and propose whatever they got, next
  to forged items named like another scope's. The memory belongs to several sessions and
  users, among them owners named like the asking one (`s-me/x`, an id holding a `/`).

  Whatever they do: no read gives them anything of memory their request's scope does not
  allow; a probe of such an item answers as for an item that does not exist (no variant,
  score 0, no similarity, no token count, no graph node, no rank); the count is the
  count the scope allows; another session's access log is as it was; an item forged with another scope's id fares as one forged with
  an id nobody has; and no text of such memory is in the context's fragments, its dropped
  list or its reports.

  The CI runs the count below; `nox -s scope_fuzz` runs 10,000 (CONTEXTPIPE_FUZZ_CASES
  sets the count).

  Background:
    Given a project whose memory belongs to several sessions and users, with vectors

  Scenario: A plugin that widens its filters or guesses names reads nothing of another scope
    When 300 random requests run with a generated strategy that probes every read, each checked that:
      | invariant                                                                      |
      | the request succeeds                                                           |
      | no read gave the strategy memory its request's scope does not allow            |
      | every probe of such memory answered as for an item that does not exist         |
      | the store's count is the count the request's scope allows                      |
      | no other session's access log changed                                          |
      | an item forged with another scope's id fared as one forged with an unused id    |
      | no text of such memory is in the fragments, the dropped list or the reports    |
    Then every case held every invariant
    And every read method was probed with every kind of filters
