Feature: Search by meaning
  `contextpipe index` writes the text and the graph first, then computes a vector for every
  full-text fragment with the configured embedder (`[embedding] model`). The strategy
  `semantic-embedding` proposes the fragments nearest to the query in that vector space;
  `relevance` combines their similarity with keyword scores. A query never waits for
  vectors: until they exist, both strategies are skipped, saying what to run.

  Background:
    Given three short documents about baking bread, rockets and caring for a puppy

  Scenario: A question in other words than the documents' finds the right one by meaning
    Given the project is indexed
    And the vectors of the store are computed
    When I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then the context starts with the document "docs/puppy.md"
    And its reason from "semantic-embedding" gives the similarity to the query

  Scenario: Keyword search alone finds nothing for the same question
    Given the project is indexed
    When I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "simple-keyword"
    Then no document is in the context

  Scenario: Until the vectors are computed the semantic strategies are skipped, saying what to run
    Given the project is indexed
    When I ask for "caring for a puppy" within 200 tokens
    Then the report of "semantic-embedding" says skipped with a reason mentioning "contextpipe index PATH"
    And the report of "relevance" says skipped with a reason mentioning "no vectors of embedder"
    And the context starts with the document "docs/puppy.md"

  Scenario: Computing vectors again embeds only new and changed texts
    Given the project is indexed
    And the vectors of the store are computed
    When I change "docs/rocket.md" to:
      """
      # Rockets

      A rocket carries its own oxidiser, so its engine also works in the vacuum of space.
      """
    And I add the file "docs/garden.md" with "# Tomatoes\n\nWater tomato plants at the root, in the morning."
    And the project is indexed again and its vectors are computed
    Then 2 texts were embedded
    And every full-text fragment of the store has a vector

  Scenario: Another embedder replaces the store's vectors instead of mixing them
    Given the project is indexed
    And the vectors of the store are computed
    When the vectors are computed again with the embedder "wordllama"
    Then every text was embedded again
    And the store's vectors are those of "wordllama" only
    And a pipeline configured for "minilm" skips "semantic-embedding" saying "no vectors of embedder 'minilm'"

  Scenario: A similarity threshold leaves out what is not similar enough
    Given the setting "strategies.semantic-embedding.options.min_similarity" is 0.99
    And the project is indexed
    And the vectors of the store are computed
    When I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then the report of "semantic-embedding" shows 0 candidates proposed

  Scenario: While vectors are being computed, the reasons say how much of the store has them
    Given the setting "embedding.batch_size" is 1
    And the project is indexed
    And computing the vectors is interrupted after the first batch
    When I ask for "How do I bake bread?" within 200 tokens using only the strategy "semantic-embedding"
    Then every reason from "semantic-embedding" says "33% of the store has vectors so far"

  Scenario: relevance shows each part of its score in the reason
    Given the project is indexed
    And the vectors of the store are computed
    When I ask for "rocket engine in orbit" within 200 tokens using only the strategy "relevance"
    Then the context starts with the document "docs/rocket.md"
    And its reason from "relevance" names the lexical, semantic, title and path parts

  Scenario: A query term among the words of a title or a path earns relevance's bonuses
    # Words of identifiers count (FuelValve, launch_pad), and so does a file's stem.
    Given a file "docs/launch_pad/checklist.md" containing:
      """
      # Prüfung der FuelValve

      Inspect every seal before the countdown starts.
      """
    And the project is indexed
    And the vectors of the store are computed
    When I ask for "valve launch countdown checklist" within 200 tokens using only the strategy "relevance"
    Then the reason from "relevance" for the document "docs/launch_pad/checklist.md" ends with "title terms 25%, path terms 50%"

  Scenario: A damaged vectors file is moved aside and keyword search goes on
    Given the project is indexed
    And the vectors of the store are computed
    When the vectors file of the store is overwritten with garbage
    And I ask for "rocket engine" within 200 tokens
    Then the context starts with the document "docs/rocket.md"
    And the damaged vectors file was kept beside the store
    And the report of "semantic-embedding" says skipped with a reason mentioning "no vectors of embedder"

  Scenario Outline: Random values written over the saved <file> are never served as similarities
    Search maps the matrix a query built and saved rather than read every vector again; its
    files carry checksums, and a file that fails its one is built again from the vectors'
    database. Before, a matrix of random values gave "similarity 1.016 to the query".
    Given 300 more short documents
    And the project is indexed
    And the vectors of the store are computed
    When I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    And the saved <file> of the store is written over with random values (seed 3)
    And I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then the context and its reasons are those of the first answer
    And the checksum of the saved <file> holds again

    Examples:
      | file          |
      | vector matrix |
      | row ids       |

  Scenario: A stored vector damaged inside its record is never served, and the next vector run embeds its text again
    # Random bytes over a vector in vectors.sqlite3, which SQLite reads as a whole record:
    # a query that built its matrix from them served them as similarities.
    Given the project is indexed
    And the vectors of the store are computed
    When the stored vectors of "docs/puppy.md" are replaced with random bytes, and the saved matrix goes
    And I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then the context holds nothing of "docs/puppy.md"
    When the project is indexed again and its vectors are computed
    And I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then the context starts with the document "docs/puppy.md"

  Scenario: Random values written over the saved approximate index are never searched
    Given the setting "store.approximate_vectors_above" is 100
    And 300 more short documents
    And the project is indexed
    And the vectors of the store are computed
    When I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then every reason from "semantic-embedding" says "approximate search"
    When the saved approximate index of the store is written over with random values (seed 3)
    And I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then the context starts with the document "docs/puppy.md"
    And no reason from "semantic-embedding" says "approximate search"
    When the project is indexed again and its vectors are computed
    And I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then every reason from "semantic-embedding" says "approximate search"
    And the checksum of the saved approximate index holds again

  Scenario: A killed embedding run keeps what it committed, and the next run goes on from there
    Given 300 more short documents
    And the project is indexed
    When a `contextpipe index` of the project is killed once some vectors are committed
    And `contextpipe index` runs on the project again
    Then the second run embedded only the texts the first did not
    And every full-text fragment of the store has a vector

  Scenario: Each kind of score is normalised over the pool as configured
    Then min-max normalisation maps any pool of scores onto 0 to 1, keeping their order
    And z-score normalisation gives any pool of unequal scores mean 0 and deviation 1
    And a pool of equal scores normalises to 1 by min-max when positive, 0 otherwise, and 0 by z-score

  Scenario: With all its weight on the lexical score, relevance ranks as keyword search does
    Given the setting "strategies.relevance.options.semantic_weight" is 0.0
    And the setting "strategies.relevance.options.title_bonus" is 0.0
    And the setting "strategies.relevance.options.path_bonus" is 0.0
    And the project is indexed
    And the vectors of the store are computed
    When I ask for "rocket engine dough oven vet" within 2000 tokens using only the strategy "relevance"
    Then the fragments proposed by "relevance" come in the order "simple-keyword" proposes them

  Scenario: A first hit far larger than the budget does not leave the context nearly empty
    Given a handbook on caring for a puppy of about 2000 tokens
    And 12 short notes about looking after dogs
    And the project is indexed
    And the vectors of the store are computed
    When I ask for "How should I look after my new dog?" within 300 tokens using only the strategy "semantic-embedding"
    Then the context holds at least 5 of the short notes about dogs
    When I ask for "How should I look after my new dog?" within 300 tokens using only the strategy "relevance"
    Then the context holds at least 5 of the short notes about dogs

  Scenario: A store with many vectors is searched through an approximate index that finds what exact search finds
    Given the setting "store.approximate_vectors_above" is 100
    And 300 more short documents
    And the project is indexed
    And the vectors of the store are computed
    When I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then the context starts with the document "docs/puppy.md"
    And every reason from "semantic-embedding" says "approximate search"
    And 20 queries find the same fragments, with the same similarities, through the approximate index as by exact search

  Scenario: The approximate index follows new and changed texts at the next index run
    Given the setting "store.approximate_vectors_above" is 100
    And 300 more short documents
    And the project is indexed
    And the vectors of the store are computed
    When I add the file "docs/garden.md" with "# Tomatoes\n\nWater tomato plants at the root, in the morning."
    And I change "docs/puppy.md" to:
      """
      # Kittens

      A young cat sleeps most of the day and plays with string.
      """
    And the project is indexed again and its vectors are computed
    And I ask for "When should I water my tomatoes?" within 200 tokens using only the strategy "semantic-embedding"
    Then the context starts with the document "docs/garden.md"
    And every reason from "semantic-embedding" says "approximate search"
    When I ask for "What does a young cat do all day?" within 200 tokens using only the strategy "semantic-embedding"
    Then the context starts with the document "docs/puppy.md"

  Scenario: Until a vector run finishes, the vectors it added are found by exact search
    Given the setting "store.approximate_vectors_above" is 100
    And 300 more short documents
    And the project is indexed
    And the vectors of the store are computed
    When I add the file "docs/garden.md" with "# Tomatoes\n\nWater tomato plants at the root, in the morning."
    And the project is indexed again
    And computing the vectors is interrupted after the first batch
    And I ask for "When should I water my tomatoes?" within 200 tokens using only the strategy "semantic-embedding"
    Then the context starts with the document "docs/garden.md"
    And no reason from "semantic-embedding" says "approximate search"

  Scenario: A damaged approximate index is left unused and built again by the next vector run
    Given the setting "store.approximate_vectors_above" is 100
    And 300 more short documents
    And the project is indexed
    And the vectors of the store are computed
    When the approximate index file of the store is overwritten with garbage
    And I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then the context starts with the document "docs/puppy.md"
    And no reason from "semantic-embedding" says "approximate search"
    When the project is indexed again and its vectors are computed
    And I ask for "How should I look after my new dog?" within 200 tokens using only the strategy "semantic-embedding"
    Then every reason from "semantic-embedding" says "approximate search"

  Scenario: A document that says what a selected one says, in other words, is left out as its paraphrase
    # Near vectors and shared words: the same claim. Near vectors alone (statins) are the
    # same topic, and stay.
    Given a file "docs/aspirin.md" containing:
      """
      Aspirin lowers the risk of a second heart attack in adults.
      """
    And a file "docs/aspirin-again.md" containing:
      """
      In adults, aspirin reduces the risk of having another heart attack.
      """
    And a file "docs/statins.md" containing:
      """
      Statins reduce cholesterol and cardiovascular events in patients.
      """
    And the project is indexed
    And the vectors of the store are computed
    When I ask for "Does aspirin prevent another heart attack?" within 400 tokens using only the strategy "semantic-embedding"
    Then the document "docs/aspirin.md" is left out as a paraphrase of the document "docs/aspirin-again.md"
    And the context holds the document "docs/statins.md"

  Scenario: A document that says the same with other numbers is another claim, and stays
    # Their vectors are 0.95 alike and they share most words: only the numbers differ.
    Given a file "docs/kiln-then.md" containing:
      """
      Our kiln fires stoneware at 900 degrees.
      """
    And a file "docs/kiln-now.md" containing:
      """
      Our kiln now fires stoneware at 1200 degrees.
      """
    And the project is indexed
    And the vectors of the store are computed
    When I ask for "At what temperature does the kiln fire?" within 400 tokens using only the strategy "semantic-embedding"
    Then the context holds the document "docs/kiln-then.md"
    And the context holds the document "docs/kiln-now.md"

