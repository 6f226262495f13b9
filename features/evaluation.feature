Feature: Measuring and tuning the assembled context on a BEIR benchmark
  `contextpipe eval beir FOLDER` indexes a BEIR folder (corpus.jsonl, queries.jsonl,
  qrels/SPLIT.tsv) into a temporary store and says how good the assembled context is:
  nDCG@10, Recall@10 and Recall@100 of the documents it holds, in order, and the share of
  queries whose context at 500, 1000 and 2000 tokens holds a relevant document; for the
  default mix and for each strategy alone. `contextpipe tune beir FOLDER` searches strategy
  weights and fusion settings and writes the winners to config.toml.

  Most scenarios here check figures by hand for keyword search alone, so they switch the
  semantic strategies off; the last one measures them too.

  Background:
    Given the semantic strategies and embedding are switched off by CONTEXTPIPE_* variables
    Given a BEIR folder "tiny" with the documents:
      | id  | title            | text                                                             |
      | d1  | Coffee and sleep | Caffeine in coffee delays sleep onset and shortens deep sleep.   |
      | d2  | Tea              | Green tea contains less caffeine than coffee and also theanine.  |
      | d3  | Running          | Regular running improves heart health and lowers blood pressure. |
      | d4  | Swimming         | Swimming is a low impact exercise that trains the whole body.    |
      | d5  | Vitamin D        | Sunlight lets the skin make vitamin D, which bones need.         |
      | d6  | Calcium          | Calcium from dairy and leafy greens keeps bones strong.          |
      | d7  | Volcanoes        | Volcanic eruptions release ash and sulfur dioxide into the air.  |
      | d8  | Glaciers         | Glaciers retreat as average temperatures rise.                   |
      | d9  | Bees             | Honey bees pollinate crops and make honey from nectar.           |
      | d10 | Ants             | Ant colonies divide labour between workers and a queen.          |
      | d11 | Tides            | The gravity of the moon causes the ocean tides.                  |
      | d12 | Comets           | Comets are icy bodies that grow tails near the sun.              |
    And its queries, judged in "qrels/test.tsv":
      | id | text                      | relevant |
      | q1 | does caffeine delay sleep | d1       |
      | q2 | coffee caffeine sleep     | d2       |
      | q3 | why do ice sheets shrink  | d8       |
      | q4 | how is honey made         |          |
    And the BEIR folder "tiny" judges the same in "qrels/train.tsv"

  Scenario: The figures a user checks by hand: first place, second place, never found
    # q1 finds d1 first (1), q2 finds d2 second, after d1 (1 / log2 3 = 0.6309), q3 shares
    # no word with d8 (0); q4 is not judged, so it is not asked.
    When I run "contextpipe eval beir tiny --format json"
    Then the command succeeds
    And the figures of the default mix are:
      | key             | value  |
      | queries         | 3      |
      | ndcg@10         | 0.5436 |
      | recall@10       | 0.6667 |
      | recall@100      | 0.6667 |
      | budget_hit@500  | 0.6667 |
      | budget_hit@1000 | 0.6667 |
      | budget_hit@2000 | 0.6667 |

  Scenario: The JSON result has exactly the documented keys, for the mix and each strategy
    When I run "contextpipe eval beir tiny --format json"
    Then the result has exactly the keys "queries, ndcg@10, recall@10, recall@100, budget_hit@500, budget_hit@1000, budget_hit@2000, per_strategy"
    And the figures of "simple-keyword" alone have exactly the same keys but "per_strategy"
    And the figures of "simple-keyword" alone are those of the default mix

  Scenario: The text report has a line for the mix and one per strategy
    When I run "contextpipe eval beir tiny"
    Then the command succeeds
    And the output says "BEIR tiny (test): 3 judged queries"
    And the output has a line starting "default mix" with "0.5436"
    And the output has a line starting "simple-keyword" with "0.5436"

  Scenario: A strategy installed later is measured alone without any change to eval
    Given the installed package "contextpipe-demo" provides the strategy "demo" through its entry point
    When I run "contextpipe eval beir tiny --format json"
    Then the command succeeds
    And the per-strategy figures are for "demo, simple-keyword"
    And the figures of "demo" alone have "ndcg@10" 0.0
    And the figures of "simple-keyword" alone have "ndcg@10" 0.5436

  Scenario: A strategy that runs for no query has no figures, and a warning says why
    Given the installed package "contextpipe-demo" provides the strategy "demo" through its entry point
    And the project config file:
      """
      [strategies.demo]
      enabled = false
      """
    When I run "contextpipe eval beir tiny --format json"
    Then the command succeeds
    And the per-strategy figures are for "simple-keyword"
    And stderr says "warning: demo ran for no query (skipped: disabled in config)"

  Scenario: --limit asks only the first judged queries, in the order of the qrels file
    When I run "contextpipe eval beir tiny --limit 2 --format json"
    Then the figures of the default mix are:
      | key       | value  |
      | queries   | 2      |
      | ndcg@10   | 0.8155 |
      | recall@10 | 1.0    |

  Scenario: Another split reads its own qrels file
    Given the BEIR folder "tiny" judges only "q1" relevant to "d1" in "qrels/train.tsv"
    When I run "contextpipe eval beir tiny --split train --format json"
    Then the figures of the default mix are:
      | key     | value |
      | queries | 1     |
      | ndcg@10 | 1.0   |

  Scenario Outline: A BEIR folder without <file> stops with one line naming it
    Given the file "tiny/<file>" is removed
    When I run "contextpipe eval beir tiny"
    Then the command fails with one line on stderr naming "tiny/<file>: no such file"

    Examples:
      | file           |
      | corpus.jsonl   |
      | queries.jsonl  |
      | qrels/test.tsv |

  Scenario Outline: A broken line of a BEIR file stops with one line naming file and line
    Given line <line> of "tiny/<file>" is replaced by "<text>"
    When I run "contextpipe eval beir tiny"
    Then the command fails with one line on stderr naming "tiny/<file>:<line>: <what>"

    Examples:
      | file           | line | text                   | what                                                          |
      | corpus.jsonl   | 3    | {"_id": "d3"           | not JSON                                                      |
      | corpus.jsonl   | 2    | {"_id": 2, "text": "x"} | "_id" must be a string                                        |
      | queries.jsonl  | 1    | ["q1"]                 | not a JSON object                                             |
      | qrels/test.tsv | 2    | q1 d1 1                | expected query-id, corpus-id and an integer score, tab-separated |

  Scenario: A judged query that queries.jsonl lacks is named
    Given line 3 of "tiny/queries.jsonl" is replaced by "{"_id": "q9", "text": "other"}"
    When I run "contextpipe eval beir tiny"
    Then the command fails with one line on stderr naming "query 'q3' is not in"

  Scenario: Tuning writes the winners into config.toml, keeping the user's other settings and comments
    # It tunes on the train split unless told (it tuned on test, which eval judges by).
    Given the project config file:
      """
      # my settings for this project

      [budget]
      # what my agent usually asks for
      default = 1234

      [packing]
      duplicate_threshold = 0.9
      mmr_lambda = 0.75
      """
    When I run "contextpipe tune beir tiny --format json"
    Then the command succeeds
    And the config file loads, with "budget.default" 1234 and "packing.duplicate_threshold" 0.9
    And the config file still has the lines "# my settings for this project" and "# what my agent usually asks for"
    And the config file holds the tuned "fusion.rrf_k" and "packing.mmr_lambda" the result names
    And the config file starts with a comment naming "nDCG@10", the folder "tiny", "split train" and the score

  Scenario: When no trial scores higher, the user's own values stay
    # Every setting tried orders these tiny contexts alike: every trial ties.
    Given the project config file:
      """
      [fusion]
      rrf_k = 40

      [packing]
      mmr_lambda = 0.6
      """
    When I run "contextpipe tune beir tiny --format json"
    Then every trial scored the same
    And the config file loads, with "fusion.rrf_k" 40 and "packing.mmr_lambda" 0.6

  Scenario: Tuning searches the weight of each strategy that ran, when there are several
    # recency and tiered decline these queries (nothing asks what is newest; no session),
    # so no weight of theirs could change a context: trying them would waste trials.
    Given the installed package "contextpipe-demo" provides the strategy "demo" through its entry point
    When I run "contextpipe tune beir tiny --format json"
    Then the command succeeds
    And the trials searched "strategies.demo.weight, strategies.simple-keyword.weight, fusion.rrf_k, packing.mmr_lambda"
    And the config file loads, with "budget.default" 4000 and "fusion.rrf_k" as tuned

  Scenario: Tuning tries each weight as multiples of the weight the strategy runs with
    Given the installed package "contextpipe-demo" provides the strategy "demo" through its entry point
    And the project config file:
      """
      [strategies.simple-keyword]
      weight = 2.0
      """
    When I run "contextpipe tune beir tiny --format json"
    Then the trials tried "strategies.simple-keyword.weight" at 0.5, 1.0, 2.0, 4.0 and 8.0
    And the trials tried "strategies.demo.weight" at 0.25, 0.5, 1.0, 2.0 and 4.0

  Scenario: A pass of the search that found better values is followed by a second one
    # The objective is scripted: rrf_k 5 is better at any weight, and at rrf_k 5 (only) a
    # weight of 4 is better still, which a single pass (weights first) cannot find.
    Given a tuning objective where "fusion.rrf_k" 5 adds 0.1, and "strategies.demo.weight" 4 adds 0.05 only with it
    When the search runs over "strategies.demo.weight" and "fusion.rrf_k"
    Then the best values are "strategies.demo.weight" 4.0 and "fusion.rrf_k" 5
    And the second pass tried no combination the first had tried

  Scenario: Tuning is deterministic: the same data and settings give the same file, byte for byte
    Given the project config file:
      """
      [budget]
      default = 2000
      """
    When I run "contextpipe tune beir tiny" twice, from the same config file
    Then both runs wrote the same config file, byte for byte

  Scenario: Tuning again replaces the earlier note instead of adding another
    When I run "contextpipe tune beir tiny"
    And I run "contextpipe tune beir tiny"
    Then the command succeeds
    And the config file has one note, at the top

  Scenario: A config file whose layout cannot take the tuned values is left as it was
    Given the project config file:
      """
      fusion = { rrf_k = 60 }
      """
    When I run "contextpipe tune beir tiny"
    Then the command fails with one line on stderr naming "config.toml: cannot write the tuned settings"
    And the config file is unchanged

  Scenario: With vectors, eval measures the semantic strategies too, and they find what shares no word
    Given the semantic strategies and embedding are switched on again
    When I run "contextpipe eval beir tiny --format json"
    Then the command succeeds
    And the per-strategy figures are for "relevance, semantic-embedding, simple-keyword"
    And the figures of "simple-keyword" alone have "ndcg@10" 0.5436
    And the figures of "semantic-embedding" alone have "recall@10" 1.0
