Feature: Bring your own chunks: what a caller's retriever found, without repeats, within the budget
  A RAG application already has a retriever and over-fetches on purpose. It hands
  contextpipe the chunks (`Pipeline.optimize`, `POST /v1/optimize`, `contextpipe
  optimize`), with their scores and vectors when it has them, and gets back the ones worth
  their tokens: exact duplicates and paraphrases of the same claim left out, one chunk per
  topic, relevance balanced with diversity, and the rest packed into the budget. Every
  chunk left out is listed with the rule that left it out and the chunk it gave way to.
  The vectors below have three dimensions so that a reader can see which are near: their
  cosines are what the rules compare.

  Scenario: A chunk repeated with other capitals and spacing is an exact duplicate of the first
    Given the chunks:
      | id | text                                                    | score | vector |
      | a1 | Aspirin lowers the risk of a second heart attack.        | 0.9   | 1,0,0  |
      | a2 | aspirin lowers the risk   of a second HEART attack.      | 0.8   | 1,0,0  |
      | b1 | Statins lower cholesterol in patients with diabetes.     | 0.7   | 0,1,0  |
    When I optimize them for "does aspirin prevent heart attacks" within 200 tokens
    Then the chunks kept are "a1, b1" in this order
    And "a2" was left out as an exact duplicate of "a1"
    And the output uses at most the budget

  Scenario: The same text in another namespace is not a duplicate
    # Two tenants' copies of a policy are two chunks: each tenant's answer cites its own.
    Given the chunks:
      | id | text                                   | score | vector | namespace |
      | t1 | Refunds are paid within 14 days.       | 0.9   | 1,0,0  | acme      |
      | t2 | Refunds are paid within 14 days.       | 0.8   | 0,1,0  | globex    |
    When I optimize them for "refund delay" within 200 tokens
    Then the chunks kept are "t1, t2" in this order

  Scenario: A paraphrase of the same claim, near in vector and in words, is left out
    Given the chunks:
      | id | text                                                              | score | vector      |
      | p1 | Aspirin lowers the risk of a second heart attack in adults.        | 0.9   | 1,0,0       |
      | p2 | In adults, aspirin reduces the risk of having another heart attack. | 0.8   | 0.98,0.2,0  |
      | q1 | The Eiffel Tower was completed in 1889 for the World's Fair.       | 0.5   | 0,0,1       |
    When I optimize them for "aspirin and heart attacks" within 200 tokens
    Then the chunks kept are "p1, q1" in this order
    And "p2" was left out as a paraphrase of "p1"

  Scenario: The same words with other numbers are another claim, not a paraphrase
    # A changed fact: both stay, each in its own cluster at a strict threshold.
    Given the chunks:
      | id  | text                                  | score | vector      |
      | k1  | The kiln fires at 1200 degrees now.    | 0.9   | 1,0,0       |
      | k2  | The kiln fires at 900 degrees.         | 0.8   | 0.98,0.2,0  |
    When I optimize them for "kiln temperature" within 200 tokens with the options:
      """
      {"cluster_threshold": 0.99}
      """
    Then the chunks kept are "k1, k2" in this order
    And no chunk was left out as a paraphrase

  Scenario: Near vectors with different words are one topic, not one claim: the cluster keeps its most relevant
    # Same topic, different findings: not a paraphrase; the cluster's representative speaks for both.
    Given the chunks:
      | id | text                                                         | score | vector      |
      | v1 | Vitamin D deficiency is linked to bone loss in older adults.  | 0.9   | 1,0.1,0     |
      | v2 | Supplements did not prevent fractures in a five-year trial.   | 0.8   | 0.95,0.3,0  |
      | w1 | The Eiffel Tower was completed in 1889 for the World's Fair.  | 0.5   | 0,0,1       |
    When I optimize them for "vitamin D and bones" within 200 tokens
    Then the chunks kept are "v1, w1" in this order
    And "v2" was left out as represented by "v1" in cluster 1
    And no chunk was left out as a paraphrase

  Scenario: With a stricter cluster threshold the same two findings stay apart
    Given the chunks:
      | id | text                                                         | score | vector      |
      | v1 | Vitamin D deficiency is linked to bone loss in older adults.  | 0.9   | 1,0.1,0     |
      | v2 | Supplements did not prevent fractures in a five-year trial.   | 0.8   | 0.95,0.3,0  |
    When I optimize them for "vitamin D and bones" within 200 tokens with the options:
      """
      {"cluster_threshold": 0.99}
      """
    Then the chunks kept are "v1, v2" in this order

  Scenario: Without vectors, the configured embedder tells a paraphrase from a chunk on another subject
    Given the chunks:
      | id | text                                                                | score |
      | m1 | Aspirin lowers the risk of a second heart attack in adults.          | 0.9   |
      | m2 | In adults, aspirin reduces the risk of having another heart attack.  | 0.8   |
      | m3 | Statins reduce cholesterol and cardiovascular events in patients.    | 0.5   |
    When I optimize them for "does aspirin prevent heart attacks" within 200 tokens
    Then the chunks kept are "m1, m3" in this order
    And "m2" was left out as a paraphrase of "m1"
    And 4 vectors were made by the embedder

  Scenario Outline: A cluster's representative is the one the caller asks for
    Given the chunks:
      # Near vectors, few shared words: one topic cluster, no paraphrases.
      | id    | text                                                                  | score | vector       |
      | short | Caching cuts latency.                                                  | 0.9   | 1,0,0        |
      | long  | A store in front of the database answers repeated reads much faster.   | 0.6   | 0.98,0.2,0   |
      | mid   | Hot keys are served from memory.                                       | 0.7   | 0.98,-0.2,0  |
    When I optimize them for "why cache" within 200 tokens with the options:
      """
      {"representative": "<representative>", "query_embedding": [0.96, 0.28, 0]}
      """
    Then the chunks kept are "<kept>" in this order

    Examples:
      | representative | kept  |
      | auto           | short |
      | longest        | long  |
      | centroid       | short |
      | query          | long  |

  Scenario: Under target_k, MMR takes a different topic before a second chunk on the first
    Given the chunks:
      | id | text                                         | score | vector     |
      | r1 | Raft elects a leader by majority vote.        | 0.9   | 1,0,0      |
      | r2 | Raft followers time out and start elections.  | 0.85  | 0.7,0.7,0  |
      | g1 | Gossip protocols spread state epidemically.   | 0.6   | 0,0,1      |
    When I optimize them for "consensus" within 200 tokens with the options:
      """
      {"target_k": 2, "mmr_lambda": 0.5}
      """
    Then the chunks kept are "r1, g1" in this order
    And "r2" was left out by MMR

  Scenario: With MMR off, target_k keeps the most relevant
    Given the chunks:
      | id | text                                         | score | vector     |
      | r1 | Raft elects a leader by majority vote.        | 0.9   | 1,0,0      |
      | r2 | Raft followers time out and start elections.  | 0.85  | 0.7,0.7,0  |
      | g1 | Gossip protocols spread state epidemically.   | 0.6   | 0,0,1      |
    When I optimize them for "consensus" within 200 tokens with the options:
      """
      {"target_k": 2, "mmr": false}
      """
    Then the chunks kept are "r1, r2" in this order
    And "g1" was left out beyond target_k

  Scenario: A chunk too big for what is left is over budget, and a later, smaller one still fits
    Given the chunks:
      | id    | text                                   | score | vector |
      | first | Backups run every night at two.         | 0.9   | 1,0,0  |
      | big   | <a text of 300 words about retention>   | 0.8   | 0,1,0  |
      | small | Restores are tested every month.        | 0.7   | 0,0,1  |
    When I optimize them for "backups" within 60 tokens
    Then the chunks kept are "first, small" in this order
    And "big" was left out over budget
    And the output uses at most the budget

  Scenario: Compression cuts a long table with a marker and never lengthens a text
    Given the chunks:
      | id    | text                          | score | vector |
      | table | <a table of 200 rows>         | 0.9   | 1,0,0  |
      | prose | Backups   run   every night.  | 0.8   | 0,1,0  |
    When I optimize them for "backups" within 2000 tokens with the options:
      """
      {"compress": true}
      """
    Then the chunk "table" was kept compressed, ending "more lines cut]"
    And the chunk "prose" was kept as "Backups run every night."
    And no kept chunk is longer than it came in

  Scenario: The same chunks give the same output, byte for byte
    Given the chunks:
      | id | text                                                         | score | vector      |
      | v1 | Vitamin D deficiency is linked to bone loss in older adults.  | 0.9   | 1,0.1,0     |
      | v2 | Supplements did not prevent fractures in a five-year trial.   | 0.9   | 0.95,0.3,0  |
      | w1 | The Eiffel Tower was completed in 1889 for the World's Fair.  | 0.9   | 0,0,1       |
    When I optimize them for "vitamin D" within 200 tokens twice
    Then both answers are the same, but for their times

  Scenario: A SlimContext caller's field names are understood
    Given the chunks:
      | id | text                                         | score | vector     |
      | r1 | Raft elects a leader by majority vote.        | 0.9   | 1,0,0      |
      | r2 | Raft followers time out and start elections.  | 0.85  | 0.7,0.7,0  |
      | g1 | Gossip protocols spread state epidemically.   | 0.6   | 0,0,1      |
    When I optimize them for "consensus" within 200 tokens with the options:
      """
      {"target_k": 2, "enable_mmr": false, "representative_strategy": "longest", "cluster_linkage": "single"}
      """
    Then the chunks kept are "r1, r2" in this order

  Scenario: More chunks than an over-fetch is refused, saying how many are allowed
    Given 1001 chunks of one line each
    When I optimize them for "backups" within 200 tokens
    Then the optimisation fails saying "chunks: Tuple should have at most 1000 items"

  Scenario Outline: Bad input is one error naming the chunk and the field
    Given the chunks:
      | id | text                              | score | vector |
      | c1 | Backups run every night at two.    | 0.9   | 1,0,0  |
      | c2 | Restores are tested every month.   | 0.7   | 0,0,1  |
    When I optimize them for "backups" within 200 tokens with the options:
      """
      <options>
      """
    Then the optimisation fails saying "<error>"

    Examples:
      | options                                                                   | error                                                      |
      | {"chunks": []}                                                            | chunks: Tuple should have at least 1 item                  |
      | {"chunks": [{"id": "c1"}]}                                                | chunks.0.text: Field required                              |
      | {"chunks": [{"id": "c1", "text": "a"}, {"id": "c1", "text": "b"}]}        | chunk 'c1' id: repeats an earlier chunk's                  |
      | {"token_budget": 0}                                                       | token_budget: Input should be greater than 0               |
      | {"chunks": [{"id": "c1", "text": "a", "embedding": [1, 0]}, {"id": "c2", "text": "b", "embedding": [1, 0, 0]}]} | chunk 'c2' embedding: 3 values, but chunk 'c1' embedding has 2 |
      | {"query_embedding": [0, 0, 0]}                                            | query_embedding: all zeros                                 |
      | {"query_embedding": [1, NaN, 0]}                                          | query_embedding.1: Input should be a finite number         |
      | {"chunks": [{"id": "c1", "text": "a", "embedding": [1, 2]}, {"id": "c2", "text": "b"}]} | chunk 'c2' has no embedding, and the given ones (2 values) are not of the embedder minilm (384) |
