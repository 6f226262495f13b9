Feature: A damaged store is reported in one line that says what to do, and rebuilt on request
  Opening the store checks, cheaply, that its database is whole: the file header and size,
  the tables and indexes, and their first and last entries. A truncated file, a file
  overwritten with something else or a dropped table stops every command with one line
  naming the file, what is wrong and what to run: `contextpipe index --rebuild PATH`, which
  moves the damaged store aside (nothing is deleted) and indexes into a new one. A first
  index that was interrupted before it saved anything says so. Damage further inside (a
  page in the middle of a table or an index) is found by the first read that meets it, or
  by `contextpipe index --check`, which reads everything; either way it is noted in the
  store, and every command after it says so too, `index` included.

  Background:
    Given the sample documentation is indexed

  Scenario Outline: A store whose database is <damage> is reported as damaged by every reader
    When the store's database is <damage>
    And I ask for "budget" within 400 tokens
    Then the assembly fails with StoreError saying "damaged (<what>"
    And the assembly error says "run `contextpipe index --rebuild PATH`"
    And loading the graph fails with StoreError saying "damaged (<what>"
    And counting the graph fails with StoreError saying "damaged (<what>"
    And warming the pipeline up fails with StoreError saying "damaged (<what>"
    And indexing the project fails with StoreError saying "damaged (<what>"

    Examples:
      | damage                    | what                                            |
      | cut to its first page     | truncated: 4,096 of                             |
      | cut in half               | truncated:                                      |
      | overwritten with garbage  | not an SQLite database: overwritten or cut short |
      | missing its fragments table | table fragments is missing                    |
      | missing its search index  | table fts is missing                            |
      | missing its keyword index | table text_postings is missing                  |
      | missing its generation    | no generation recorded                          |

  Scenario: A keyword index that does not add up fails the request, and every command after it
    When the store's database is left with a keyword index entry cut short
    And I ask for "budget" within 400 tokens
    Then the assembly fails with StoreError saying "damaged (keyword index: pending segment cut short); run `contextpipe index --rebuild PATH`"
    And indexing the project fails with StoreError saying "damaged (keyword index: pending segment cut short)"

  Scenario: Rebuilding moves the damaged store aside, keeps it as it was, and indexes anew
    Given the store's database is cut in half
    When the store is moved aside
    Then it was moved to a sibling folder named like ".contextpipe.damaged-20250101T120000Z"
    And the moved folder holds the damaged database, byte for byte
    When I index the project
    Then the index summary counts:
      | what          | count |
      | files indexed | 4     |
    And the folders not walked are:
      | path                                   | reason            |
      | <moved>                                | contextpipe store |
    When I ask for "budget" within 400 tokens
    Then the context is not empty

  Scenario: Moving a healthy store aside says it was not damaged
    When the store is moved aside
    Then it was moved to a sibling folder named like ".contextpipe.previous-20250101T120000Z"

  Scenario: A first index that was interrupted before it saved anything says so
    When the store's database is left as an interrupted first index leaves it
    And I ask for "budget" within 400 tokens
    Then the assembly fails with StoreError saying "the first index was interrupted before it saved anything; run `contextpipe index PATH` again"
    When I index the project
    Then the index summary counts:
      | what          | count |
      | files indexed | 4     |

  Scenario: Another process that finishes with the store leaves a running pipeline's log in place
    The connections of one process share its locks on the database file, and opening and
    closing that file outside SQLite drops them all: the next process to finish would then
    take the store for unused and delete the write-ahead log the pipeline still reads and
    writes, which is how a store in use gets damaged.
    Given the pipeline has asked for "budget" from 3 threads at once
    When another process reads the store and exits
    Then the store's write-ahead log is still there
    And a memory item the pipeline remembers now is in its next context

  Scenario: A pipeline still running when another one rebuilds its store goes on with the new store
    Rebuilding moves the store aside and indexes into a new one under the same name. A
    pipeline that had the old one open reads the new one from its next request, as one
    started then would: what it remembers lands in the new store, and it finds it there.
    Given the pipeline has asked for "budget" from 2 threads at once
    When another pipeline moves the store aside and indexes the project anew
    Then a memory item the pipeline remembers now is in its next context

  Scenario Outline: A page overwritten inside <name> is found by the full check, and said by every command after it
    Given a project of 40 generated modules is indexed
    When a page inside <name> of the index database is overwritten (seed <seed>)
    Then checking the whole store fails with StoreError saying "index.sqlite3: damaged (<what>"
    And indexing the project fails with StoreError saying "index.sqlite3: damaged (<what>"
    And the assembly of "ledger invoice harbour" fails with StoreError saying "damaged (<what>"

    Examples:
      | name                         | seed | what                    |
      | fragments                    | 1    | table fragments:        |
      | fragments                    | 2    | table fragments:        |
      | fragments_by_uri             | 3    | table fragments:        |
      | sqlite_autoindex_fragments_1 | 4    | table fragments:        |
      | edges                        | 5    | table edges:            |
      | nodes_by_path                | 6    | table nodes:            |
      | fts_content                  | 7    | table fts_content:      |
      | text_segments                | 8    | table text_segments:    |

  Scenario: Damage a request meets fails it in one line, and every command after it says so
    The keyword index reads every pending segment of the index: a page of one overwritten is
    met by the first query. Before, the query went on without its keyword search, and `index`
    called every file unchanged, for ever.
    Given a project of 40 generated modules is indexed
    When a page inside text_segments of the index database is overwritten (seed 8)
    And I ask for "ledger invoice harbour" within 300 tokens
    Then the assembly fails with StoreError saying "index.sqlite3: damaged (database disk image is malformed); run `contextpipe index --rebuild PATH`"
    And indexing the project fails with StoreError saying "damaged (database disk image is malformed)"
    And every command fails in one line saying "damaged (database disk image is malformed); run `contextpipe index --rebuild PATH` to move it aside"

  Scenario: A text damaged inside its cell is found by the first read of it, and by the full check
    # The page stays valid SQLite; the text read back is not UTF-8. The request went on
    # without the strategies that read it ("relevance: error: OperationalError: Could not
    # decode to UTF-8"), and `index` called every file unchanged.
    Given a project of 40 generated modules is indexed
    When the bytes of the stored texts holding "ledger" are replaced with bytes that are not UTF-8
    Then the assembly of "ledger invoice harbour" fails with StoreError saying "index.sqlite3: damaged (a text of column 'text' is not UTF-8); run `contextpipe index --rebuild PATH`"
    And indexing the project fails with StoreError saying "damaged (a text of column 'text' is not UTF-8)"
    And checking the whole store fails with StoreError saying "index.sqlite3: damaged (table fragments: a text of column 'text' is not UTF-8)"

  Scenario: A whole store passes the full check, which says what it read
    Given a project of 40 generated modules is indexed
    Then checking the whole store says "whole ("
    And checking the whole store says "532 searchable fragments, 0 vectors checked"

  Scenario: A store found whole again by the full check is no longer said to be damaged
    A note of damage a reader made stays until the store is rebuilt, or a full check finds
    nothing wrong (the disk reads the page right again).
    Given a project of 40 generated modules is indexed
    When a page inside text_segments of the index database is overwritten (seed 8)
    And I ask for "ledger invoice harbour" within 300 tokens
    And the overwritten page is written back as it was
    Then indexing the project fails with StoreError saying "damaged (database disk image is malformed)"
    And checking the whole store says "whole ("
    When I index the project
    Then the index summary counts:
      | what          | count |
      | files indexed | 0     |

  Scenario: Rebuilding a store damaged inside a page moves it aside as damaged and recovers
    Given a project of 40 generated modules is indexed
    When a page inside fragments of the index database is overwritten (seed 1)
    And the store is moved aside
    Then it was moved to a sibling folder named like ".contextpipe.damaged-20250101T120000Z"
    And the moved folder holds the damaged database, byte for byte
    When I index the project
    And I ask for "ledger invoice harbour" within 300 tokens
    Then the context is not empty
    And checking the whole store says "whole ("

  Scenario Outline: Damage in the vectors' database is found by the full check (<damage>)
    Given a project of 40 generated modules is indexed and embedded with wordllama
    When <damage>
    Then checking the whole store fails with StoreError saying "vectors.sqlite3: damaged (<what>"
    And indexing the project fails with StoreError saying "vectors.sqlite3: damaged (<what>"
    And the assembly of "ledger invoice harbour" fails with StoreError saying "vectors.sqlite3: damaged (<what>"

    Examples:
      | damage                                                                 | what                 |
      | a page inside vectors of the vectors database is overwritten (seed 9)  | table vectors:       |
      | the bytes of one stored vector are replaced with random ones (seed 9)  | the vector of text   |
