Feature: Vectors held as float16
  A large store can hold the vectors it searches as float16, half the memory and disk of
  float32, and still find what float32 finds. The vectors database keeps float32, so the
  setting can be changed both ways without computing any vector again.

  Background:
    Given three short documents about baking bread, rockets and caring for a puppy
    And 12 short notes about looking after dogs

  Scenario: float16 finds the same fragments as float32, with similarities within 0.001
    Given the project is indexed
    And the vectors of the store are computed
    Then 8 queries find the same fragments in the same order with vectors held as "float16" as with "float32", each similarity within 0.001
    And the store searches a float16 matrix and no float32 one

  Scenario: A fragment scored on its own gets the similarity its nearest-neighbour search gave
    Given the project is indexed
    And the vectors of the store are computed
    Then 8 queries give each fragment they find, scored on its own, the similarity the search gave it, to the bit, with vectors held as "float32"
    And 8 queries give each fragment they find, scored on its own, the similarity the search gave it, within 1e-6, with vectors held as "float16"

  Scenario: Scored on its own, a fragment found through the approximate index gets the similarity the index gave it
    Given the setting "store.approximate_vectors_above" is 100
    And 300 more short documents
    And the project is indexed
    And the vectors of the store are computed
    Then the store searches its vectors through the approximate index
    And 8 queries give each fragment they find, scored on its own, the similarity the search gave it, to the bit, with vectors held as "float32"

  Scenario: A filtered search finds the same fragments with float16 as with float32
    Given the project is indexed
    And the vectors of the store are computed
    Then searches within "docs/dogs/*" find the same fragments with vectors held as "float16" as with "float32"

  Scenario: Changing the setting rewrites the searched matrix and keeps every vector
    Given the project is indexed
    And the vectors of the store are computed
    When the store is searched with vectors held as "float32"
    And the store is searched with vectors held as "float16"
    Then the store searches a float16 matrix and no float32 one
    And the vectors database holds the same float32 vectors as before
    When the store is searched with vectors held as "float32"
    Then the store searches a float32 matrix and no float16 one
    And the similarities are exactly those of the first float32 search

  Scenario: The approximate index holds float16 vectors too, and finds what exact search finds
    Given the setting "store.approximate_vectors_above" is 100
    And the setting "store.vector_dtype" is "float16"
    And 300 more short documents
    And the project is indexed
    And the vectors of the store are computed
    When I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then every reason from "semantic-embedding" says "approximate search"
    And the approximate index of the store holds float16 vectors
    And 20 queries find the same fragments, with the same similarities, through the approximate index as by exact search

  Scenario: After a change of setting the approximate index is rebuilt by the next index run, and exact search serves until then
    Given the setting "store.approximate_vectors_above" is 100
    And 300 more short documents
    And the project is indexed
    And the vectors of the store are computed
    When the setting "store.vector_dtype" becomes "float16"
    And I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then the context holds at least 5 of the short notes about dogs
    And no reason from "semantic-embedding" says "approximate search"
    When the project is indexed again and its vectors are computed
    Then 0 texts were embedded
    And the approximate index of the store holds float16 vectors
    When I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then every reason from "semantic-embedding" says "approximate search"

  Scenario: An unknown dtype is refused in one line naming the key and the value
    Given the project config file:
      """
      [store]
      vector_dtype = "float8"
      """
    When the configuration is loaded
    Then loading fails with the one-line error "store.vector_dtype: Input should be 'float32' or 'float16' (got 'float8')"
    And the error starts with the path of the config file followed by ":2:"
