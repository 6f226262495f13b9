Feature: Keyword search ranks as SQLite FTS5's bm25 ranks, fast at any size
  The embedded store answers keyword searches from its keyword index: the postings of the
  query's words, read as arrays and scored in the process. Its scores are those FTS5's
  `bm25()` gives the OR of the query's terms (title weight 3, text 1, identifier words 0.5;
  Porter stems; a quoted phrase is a phrase; a `snake_case` word is one token, its parts
  joined, as the title and identifier words hold every snake_case name), to the bit, whether a
  fragment sits in the index's folded snapshot or among the changes written since. The index
  lives in the store's database, so that a file's postings commit with the file; folding
  changes into a new snapshot is a transaction of its own.

  Background:
    Given a project of 240 generated files of 12 sections each

  Scenario: Every query ranks as FTS5's bm25 ranks the OR of its terms, folded or not
    Given the project is indexed
    Then the keyword index holds every searchable fragment in its snapshot
    And 60 generated queries each find what FTS5's bm25 ranks best, score for score
    And 60 generated queries in paths "part01/*" each find what FTS5's bm25 ranks best, score for score
    When 4 of the generated files change and 2 are deleted
    And I index the project
    Then the keyword index holds changes not folded yet
    And 60 generated queries each find what FTS5's bm25 ranks best, score for score
    And 60 generated queries in paths "part01/*" each find what FTS5's bm25 ranks best, score for score

  Scenario: A fold that is interrupted loses nothing, and the next index run folds
    When indexing the project is interrupted while the keyword index folds
    Then the keyword index holds changes not folded yet
    And 60 generated queries each find what FTS5's bm25 ranks best, score for score
    When I index the project
    Then the keyword index holds every searchable fragment in its snapshot
    And 60 generated queries each find what FTS5's bm25 ranks best, score for score

  Scenario: A store of layout 5 gets its keyword index on the next index run and ranks as before
    Given the project is indexed
    And the hits of 20 generated queries are noted
    And the store is turned back into layout 5, as the previous version wrote it
    When I ask for "budget" within 400 tokens
    Then the assembly fails with StoreError saying "index has layout 5, this contextpipe reads 13; run `contextpipe index PATH` to upgrade or rebuild it"
    When I index the project
    Then the index summary counts:
      | what            | count |
      | files indexed   | 0     |
      | files unchanged | 240   |
    And the keyword index holds every searchable fragment in its snapshot
    And the 20 generated queries find the noted hits, score for score

  Scenario: A store of layout 10 gets its snake_case names joined on the next index run and ranks as a new one
    Given the project is indexed
    And the hits of 20 generated queries are noted
    And the store is turned back into layout 10, as the previous version wrote it
    When I ask for "budget" within 400 tokens
    Then the assembly fails with StoreError saying "index has layout 10, this contextpipe reads 13; run `contextpipe index PATH` to upgrade or rebuild it"
    When I index the project
    Then the index summary counts:
      | what            | count |
      | files indexed   | 0     |
      | files unchanged | 240   |
    And the 20 generated queries find the noted hits, score for score
    And 60 generated queries each find what FTS5's bm25 ranks best, score for score
