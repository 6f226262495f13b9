Feature: The recency strategy weighs matches by their age
  `recency` proposes, for a query that asks for what is new ("latest", "recent",
  "changed"), what matches the request and was modified or added lately: a file's
  last commit or modification time, a memory item's own timestamp. A match's score decays
  exponentially with its age (`half_life_days`); a request may carry a reference time
  (`as_of`) so that what came later is left out; ties go by fragment id.

  Background:
    Given the memory items:
      | text                                                  | session | user | at               | id  |
      | The deploy freeze starts on Friday                     |         |      | 2024-05-01T10:00 | old |
      | The deploy freeze moved to Thursday after the incident |         |      | 2024-05-29T10:00 | new |
      | Lunch is at noon                                       |         |      | 2024-05-30T10:00 | off |

  Scenario: The newer match comes first, and its reason gives its age and weight
    When I ask recency alone for "deploy freeze" as of "2024-05-31T10:00"
    Then recency proposes the memory "new, old" in this order
    And the reason for "new" reads "from 2024-05-29 10:00, the newest match (weight 1.000, half-life 30 d); BM25 matched deploy, freeze"
    And the reason for "old" reads "from 2024-05-01 10:00, 28.0 days before the newest match (weight 0.524, half-life 30 d); BM25 matched deploy, freeze"

  Scenario: The half-life decides how much age counts against a better match
    Given the memory items:
      | text                                    | session | user | at               | id     |
      | deploy freeze checklist: freeze every deploy, check the checklist | | | 2024-01-01T10:00 | strong |
      | the deploy freeze checklist moved, see the wiki page for it       | | | 2024-05-30T10:00 | weak   |
    When I ask recency alone for "deploy freeze checklist" as of "2024-05-31T10:00" with a half-life of 10000 days
    Then recency proposes "strong" before "weak"
    When I ask recency alone for "deploy freeze checklist" as of "2024-05-31T10:00" with a half-life of 7 days
    Then recency proposes "weak" before "strong"

  Scenario: A recent fragment that barely matches is not a recent match
    Given the memory items:
      | text | session | user | at | id |
      | Someone mentioned a freeze at the long meeting yesterday, between lunch and the coffee break | | | 2024-05-30T12:00 | vague |
    When I ask recency alone for "deploy freeze" as of "2024-05-31T10:00"
    Then recency proposes the memory "new, old" in this order

  Scenario: A request as of an earlier time leaves out what came later and is reproducible
    When I ask recency alone for "the latest deploy freeze" as of "2024-05-15T10:00"
    Then recency proposes the memory "old" in this order
    And the reason for "old" reads "from 2024-05-01 10:00, the newest match (weight 1.000, half-life 30 d); BM25 matched deploy, freeze"
    And asking the same again gives byte-identical JSON

  Scenario: What came after a request's as_of is left out of every strategy's reads
    # as_of was the recency strategy's alone: the keyword, semantic and relevance
    # strategies proposed items from after it.
    Given the file "docs/freeze.md" about the deploy freeze modified at "2024-05-20T10:00"
    And the file "docs/early.md" about the deploy freeze modified at "2024-04-20T10:00"
    And the project is indexed
    And the vectors are computed
    Then a request about "deploy freeze" as of "2024-05-15T10:00" holds nothing from after it, with each strategy alone and with the default mix, and holds "old, docs/early.md"

  Scenario: Without a reference time, scores and reasons do not change as time passes
    When I ask recency alone for "deploy freeze" now
    And I ask recency alone for "deploy freeze" a year from now
    Then both answers are the same candidates with the same scores and reasons

  Scenario: Equal scores come in fragment id order
    Given the memory items:
      | text                | session | user | at               | id |
      | The quokka naps.    |         |      | 2024-05-20T10:00 | q3 |
      | The quokka eats.    |         |      | 2024-05-20T10:00 | q1 |
      | The quokka hops.    |         |      | 2024-05-20T10:00 | q2 |
      | The quokka rests.   |         |      | 2024-05-10T10:00 | q0 |
    When I ask recency alone for "quokka" as of "2024-05-31T10:00"
    Then recency's first 3 candidates have equal scores, in fragment id order, before "q0"

  Scenario: Files of one age give time nothing to tell apart: recency proposes nothing
    Given the files "docs/a.md, docs/b.md, docs/c.md", each about budgets, all modified at "2024-05-01T10:00"
    And the project is indexed
    When I ask recency alone for "budgets" as of "2024-05-31T10:00" within the paths "docs/*"
    Then recency proposes nothing

  Scenario: A file's modification time is its age
    Given the file "docs/a.md" about budgets modified at "2024-05-01T10:00"
    And the file "docs/b.md" about budgets modified at "2024-05-30T10:00"
    And the project is indexed
    When I ask recency alone for "budgets" as of "2024-05-31T10:00" within the paths "docs/*"
    Then recency proposes the files "docs/b.md, docs/a.md" in this order

  Scenario: A query that asks nothing of time is left to the other strategies
    When I ask for "deploy freeze" within 500 tokens using only the strategy "recency"
    Then the report of "recency" says skipped with a reason mentioning "can_handle returned 0"
    When I ask for "the latest deploy freeze" within 500 tokens using only the strategy "recency"
    Then the report of "recency" says ok
