Feature: Fuzzing plugin behaviour
  Plugins are code someone else wrote. Hypothesis generates strategies that raise (even
  SystemExit, or an exception whose message cannot be read), hang or block (plain and
  async, in retrieve and in can_handle), return junk, lie about their token counts (6 MB
  of text claiming 1 token), propose ids that collide with each other's or with stored
  fragments (a stored fragment's id with other text), or score NaN and infinity, and runs
  them in random combinations next to the built-in simple-keyword strategy over a real
  indexed store. Whatever they do, the request succeeds, its output fits the budget
  (counted by a tokenizer of the test's own), it ends within its deadline plus a small
  constant, each strategy is reported for what it did, and no strategy is credited for
  text it did not propose. Hanging strategies meet deadlines of 200 or 400 ms.

  The CI runs the counts below; `nox -s fuzz` runs 10,000 cases per scenario
  (CONTEXTPIPE_FUZZ_CASES sets the count).

  Background:
    Given the sample documentation is indexed

  Scenario: Whatever plugins do, the request succeeds within its budget and its deadline
    When 150 random requests run with generated plugins that may also hang or block, each checked that:
      | invariant                                                          |
      | the request succeeds                                               |
      | the output fits the budget, counted by the test's own tokenizer    |
      | it ends within its deadline plus 1.5 seconds                       |
      | each misbehaving strategy is reported with the status it calls for |
      | each honest strategy, the built-in one included, is reported ok    |
    Then every case held every invariant
    And every kind of plugin behaviour was tried

  Scenario: Provenance credits only the strategies that proposed a fragment's text
    When 250 random requests run with generated plugins that answer at once, each checked that:
      | invariant                                                               |
      | the request succeeds                                                    |
      | the output fits the budget, counted by the test's own tokenizer         |
      | it ends within its deadline plus 1.5 seconds                            |
      | each fragment's provenance names only strategies that proposed its text |
      | every score is a finite number, in JSON too                             |
      | each fragment's token count is the true count of its text               |
      | no fragment is shown twice, and no strategy votes twice for one         |
    Then every case held every invariant
    And every kind of plugin behaviour was tried
