Feature: Every store backend keeps the same promises
  A store backend is a plugin (entry-point group `contextpipe.stores`) that `[store] backend`
  names: the embedded SQLite store is built in, a PostgreSQL store comes later. Ingest,
  strategies and the command line reach a store only through its protocols (`Store`,
  `IndexWriter`, and the read capabilities in `Backends`: fragment lookup, text search, the
  graph view, the timeline and session tiers), so every backend has to keep the same
  promises.

  Every scenario here runs against every installed backend, each on a project of its own,
  and talks to the store through those protocols only: a new backend passes this suite
  unchanged (`behave features/store_contract.feature`). A failure names each backend that
  broke a promise, the promise, and what it did instead.

  Background:
    Given every installed store backend, each with a project of its own
    And every project has a file "app/main.py" containing:
      """
      from app import util


      def run() -> str:
          return util.slug("Hello World")
      """
    And every project has a file "app/util.py" containing:
      '''
      """Make kebab-case slugs and titles."""


      def slug(text: str) -> str:
          return text.lower().replace(" ", "-")


      def title(text: str) -> str:
          return text.title()
      '''
    And every project has a file "docs/budget.md" containing:
      """
      # Token budgets

      contextpipe never exceeds the token budget of a request. Call `run` to see it.

      ## Leftovers

      Tokens a strategy does not use go back to the pool, and the packer fills the budget.
      """
    And in every project the files were last modified:
      | path           | modified                  |
      | docs/budget.md | 2024-03-03T12:00:00+00:00 |
      | app/util.py    | 2024-03-02T12:00:00+00:00 |
      | app/main.py    | 2024-03-01T12:00:00+00:00 |

  # -- capabilities ---------------------------------------------------------------------

  Scenario: Before the first index a store offers nothing and says what to run
    Then every store offers no read capability
    And every store counts 0 files and 0 fragments
    And checking every store fails with StoreError saying "run `contextpipe index"

  Scenario: An indexed store offers every read capability, each keeping its protocol
    When every project is indexed
    Then every store offers exactly the capabilities "store, text, graph, timeline, sessions"
    And every capability a store offers keeps its protocol
    And checking every store passes

  # -- index ----------------------------------------------------------------------------

  Scenario: An indexed project is counted, searchable, and looked up deepest first
    When every project is indexed
    Then every store counts 3 files and every fragment the index wrote
    And searching every store for "pool" finds "uko://doc/docs/budget.md#leftovers" first, matching "pool"
    And searching every store for "budget slug" finds its hits best first, each with the terms it matched
    And every store scores each full text for "budget slug tokens" as its search does, whatever its rank, and 0 where no word matches
    And in every store every node's variants are its depths, deepest first, its full text first
    And in every store a lookup of many nodes at once gives each node's variants as a lookup of one does
    And every store's fragment lookup counts every variant of every node
    And every store gives the token count of each text it holds, as counted by the tokenizer that counted it, and for that text alone
    And no store has a variant of "uko://code/app/nowhere.py#ghost"

  Scenario: The writer gives every file back as it was stored, skipped ones with their reason
    Given every project has a binary file "assets/logo.bin"
    When every project is indexed
    Then every store's writer gives back these files as they are on disk:
      | path            | skipped |
      | app/main.py     |         |
      | app/util.py     |         |
      | assets/logo.bin | binary  |
      | docs/budget.md  |         |

  # -- re-index -------------------------------------------------------------------------

  Scenario: A changed file replaces its fragments, nodes and edges whole
    Given every project is indexed
    When every project's "app/util.py" is changed to:
      '''
      """Make snake_case slugs and titles."""


      def snake(text: str) -> str:
          return title(text).replace(" ", "_")


      def title(text: str) -> str:
          return text.title()
      '''
    And every project is indexed again
    Then searching every store for "kebab" finds nothing
    And searching every store for "snake_case" finds "uko://code/app/util.py#module" first, matching "snake_case, snake, case"
    And no store knows the node "uko://code/app/util.py#slug"
    And every store's graph has these edges:
      | from                         | type  | to                           |
      | uko://code/app/util.py#snake | calls | uko://code/app/util.py#title |
    And no store's graph has these edges:
      | from                       | type     | to                          |
      | uko://code/app/main.py#run | calls    | uko://code/app/util.py#slug |
      | uko://code/app/util.py     | contains | uko://code/app/util.py#slug |
    And every store counts 3 files and as many fragments as its lookups hold
    And every store holds exactly what a fresh index of its project holds

  Scenario: Indexing again with nothing changed writes nothing
    Given every project is indexed
    When every project is indexed again, recording what its store is asked to write
    Then no store was asked to replace, remove or touch a file
    And every store still offers the graph view it offered before

  Scenario: A file touched without a change is only touched
    Given every project is indexed
    When in every project "app/util.py" is touched
    And every project is indexed again, recording what its store is asked to write
    Then every store was asked only to touch "app/util.py"
    And every store's writer gives back these files as they are on disk:
      | path           | skipped |
      | app/main.py    |         |
      | app/util.py    |         |
      | docs/budget.md |         |

  # -- delete ---------------------------------------------------------------------------

  Scenario: A file that vanished takes everything read from it along
    Given every project is indexed
    When "app/util.py" is deleted from every project
    And every project is indexed again
    Then nothing read from "app/util.py" is left in any store
    And every store counts 2 files and as many fragments as its lookups hold
    And every store holds exactly what a fresh index of its project holds

  Scenario: Forgetting a folder takes everything read from it along
    Given every project is indexed
    When every project forgets the folder "app"
    Then nothing read from "app/main.py" is left in any store
    And nothing read from "app/util.py" is left in any store
    And every store counts 1 file and as many fragments as its lookups hold
    And every store holds exactly what a fresh index of its project without "app" holds

  # -- crash safety ---------------------------------------------------------------------

  Scenario: A write session that fails keeps what it committed and nothing after
    Given every project is indexed
    When a write session in every store does this and then fails:
      | step    | path           | node     | name   | text                                       | mentions |
      | replace | docs/budget.md | section  | Ledger | The zebra keeps the ledger of every run.   | run      |
      | commit  |                |          |        |                                            |          |
      | replace | app/util.py    | function | snake  | The cobra hisses at the moon on every run. | run      |
    Then the failure reached the caller of every store's write session
    And every store holds "docs/budget.md" as the session wrote it
    And every store holds "app/util.py" as it was before the session
    And searching every store for "zebra" finds "uko://doc/docs/budget.md#ledger" first, matching "zebra"
    And searching every store for "cobra" finds nothing

  Scenario: A write session that fails before its first commit changes nothing
    Given every project is indexed
    When a write session in every store does this and then fails:
      | step    | path           | node     | name  | text                            | mentions |
      | remove  | docs/budget.md |          |       |                                 |          |
      | replace | app/util.py    | function | snake | The cobra hisses at every run.  | run      |
    Then the failure reached the caller of every store's write session
    And every store holds exactly what it held before the session

  # -- text search ----------------------------------------------------------------------

  Scenario: What a user types is never query syntax
    Given every project is indexed
    Then searching every store for each of these finds what its plain words find:
      | query                 | plain words         |
      | budget OR pool        | budget pool         |
      | budget AND NOT pool   | budget and not pool |
      | "token budget         | token budget        |
      | pool"                 | pool                |
      | title:leftovers       | title leftovers     |
      | {title text}: budget  | title text budget   |
      | NEAR(token budget, 2) | near token budget 2 |
      | ^budget + pool        | budget pool         |
      | (budget               | budget              |
      | -pool                 | pool                |
    And searching every store for "keba*" finds nothing
    And searching every store for "slu*" finds nothing

  Scenario: A search keeps to its path and kind filters and to its limit
    Given every project is indexed
    Then searching every store for "budget text" in paths "docs/*" finds only fragments that fit
    And searching every store for "budget text" of kinds "function" finds only fragments that fit
    And searching every store for "budget text" in paths "app/*, docs/*" of kinds "function, section" finds only fragments that fit
    And searching every store for "budget text" within 1 result finds 1 hit
    And searching every store for "budget text" within 0 results finds nothing

  Scenario: A filter never hides a match that fits it
    Given every project has a document "docs/many.md" with 30 sections about budgets
    And every project has a file "notes/one.md" containing:
      """
      # Aside

      A long note that says budget once, among many other words about other things.
      """
    And every project has a file "app/pay.py" containing:
      '''
      def pay(amount: int) -> int:
          """Pay an amount; whether it fits the budget is checked elsewhere, with other things."""
          return amount
      '''
    And every project is indexed
    Then searching every store for "budget" in paths "notes/*" finds the best hits that fit, at every limit up to 3
    And searching every store for "budget" of kinds "function" finds the best hits that fit, at every limit up to 3

  Scenario: Ties in score come in fragment id order, whatever the limit
    Given every project has the notes "a, b, c, d, e, f" in "notes", each reading:
      """
      # Notes

      The quokka naps all day.
      """
    And every project is indexed
    Then searching every store for "quokka" finds 6 hits of equal score, in fragment id order
    And searching every store for "quokka" finds the first hits of its whole list, at every limit up to 6

  # -- graph view -----------------------------------------------------------------------

  Scenario: The graph knows each node and its edges by type and direction
    Given every project is indexed
    Then every store's graph knows "uko://code/app/util.py#slug" as the function "slug" of "app/util.py", lines 4-5
    And no store's graph knows a node "uko://code/app/nowhere.py"
    And in every store's graph, the edges coming in to "uko://code/app/util.py#slug" are:
      | from                       | type     | to                          |
      | uko://code/app/main.py#run | calls    | uko://code/app/util.py#slug |
      | uko://code/app/util.py     | contains | uko://code/app/util.py#slug |
    And in every store's graph, no edge goes out of "uko://code/app/util.py#slug"
    And in every store's graph, the "calls" edges at "uko://code/app/main.py#run" are:
      | from                       | type  | to                          |
      | uko://code/app/main.py#run | calls | uko://code/app/util.py#slug |
    And in every store's graph, the "imports, mentions" edges going out of "uko://code/app/main.py" are:
      | from                   | type    | to                     |
      | uko://code/app/main.py | imports | uko://code/app/util.py |
    And in every store's graph, the "mentions" edges at "uko://code/app/main.py#run" are:
      | from                                   | type     | to                         |
      | uko://doc/docs/budget.md#token-budgets | mentions | uko://code/app/main.py#run |

  Scenario: A subgraph holds the edges within so many hops of its nodes
    Given every project is indexed
    Then in every store's graph, the subgraph within 1 hop of "uko://code/app/util.py#slug" is:
      | from                       | type     | to                          |
      | uko://code/app/main.py#run | calls    | uko://code/app/util.py#slug |
      | uko://code/app/util.py     | contains | uko://code/app/util.py#slug |
    And in every store's graph, the subgraph within 2 hops of "uko://code/app/util.py#slug" is:
      | from                                   | type     | to                            |
      | uko://code/app/main.py                 | contains | uko://code/app/main.py#run    |
      | uko://code/app/main.py                 | imports  | uko://code/app/util.py        |
      | uko://code/app/main.py#run             | calls    | uko://code/app/util.py#slug   |
      | uko://code/app/util.py                 | contains | uko://code/app/util.py#module |
      | uko://code/app/util.py                 | contains | uko://code/app/util.py#slug   |
      | uko://code/app/util.py                 | contains | uko://code/app/util.py#title  |
      | uko://dir/app/                         | contains | uko://code/app/util.py        |
      | uko://doc/docs/budget.md#token-budgets | mentions | uko://code/app/main.py#run    |
    And in every store's graph, the subgraph within 2 hops of "uko://code/app/nowhere.py" is empty

  Scenario: PageRank seeded at a node ranks what it links to above the rest
    Given every project is indexed
    Then in every store's graph, PageRank seeded at a node ranks:
      | seed                       | higher                       | lower                              |
      | uko://code/app/main.py#run | uko://code/app/util.py#slug  | uko://doc/docs/budget.md#leftovers |
      | uko://code/app/main.py#run | uko://code/app/util.py#slug  | uko://code/app/util.py#title       |
      | uko://code/app/main.py#run | uko://code/app/util.py#slug  | uko://code/app/main.py             |
      | uko://code/app/util.py     | uko://code/app/util.py#title | uko://code/app/main.py#run         |
      | uko://code/app/util.py     | uko://code/app/util.py#title | uko://doc/docs/budget.md           |
    And in every store's graph, PageRank seeded only at "uko://code/app/nowhere.py" scores nothing
    And in every store's graph, PageRank seeded at "uko://code/app/main.py#run" and "uko://code/app/nowhere.py" scores as if seeded at the first only

  Scenario: The graph counts the nodes and edges its neighbours and subgraphs show
    Given every project is indexed
    Then every store's graph counts what its neighbours and subgraphs show

  Scenario: The graph view is kept until the index changes, and then shows the change
    Given every project is indexed
    Then every store offers the same graph view until the index changes
    When every project's "app/main.py" is changed to:
      """
      def shout(text: str) -> str:
          return text.upper()


      def run() -> str:
          return shout("Hello World")
      """
    And every project is indexed again
    Then every store's graph has these edges:
      | from                       | type  | to                           |
      | uko://code/app/main.py#run | calls | uko://code/app/main.py#shout |
    And no store's graph has these edges:
      | from                       | type    | to                          |
      | uko://code/app/main.py     | imports | uko://code/app/util.py      |
      | uko://code/app/main.py#run | calls   | uko://code/app/util.py#slug |

  # -- timeline -------------------------------------------------------------------------

  Scenario: The timeline lists every full text newest first, ties in fragment id order
    Given every project is indexed
    Then every store's timeline lists, newest first:
      | path           | modified                  |
      | docs/budget.md | 2024-03-03T12:00:00+00:00 |
      | app/util.py    | 2024-03-02T12:00:00+00:00 |
      | app/main.py    | 2024-03-01T12:00:00+00:00 |
    And every fragment a search in every store finds for "budget slug text" is on its timeline

  Scenario: The timeline keeps to its time bounds, filters and limit
    Given every project is indexed
    Then every store's timeline since "2024-03-02T12:00:00+00:00" lists only "docs/budget.md, app/util.py"
    And every store's timeline until "2024-03-02T12:00:00+00:00" lists only "app/main.py"
    And every store's timeline since "2024-03-02T14:00:00+02:00" until "2024-03-03T12:00:00+00:00" lists only "app/util.py"
    And every store's timeline since "2024-03-04T00:00:00+00:00" lists nothing
    And every store's timeline in paths "app/*" of kinds "function" lists:
      | uri                          |
      | uko://code/app/util.py#slug  |
      | uko://code/app/util.py#title |
      | uko://code/app/main.py#run   |
    And every store's timeline lists the first fragments of its whole list, at every limit up to 12

  Scenario: The timeline read on from a time lists what came next, oldest first
    Given every project is indexed
    Then every store's timeline after "2024-03-01T12:00:00+00:00" lists, oldest first, only "app/util.py, docs/budget.md"
    And every store's timeline after "2024-03-01T11:59:59+00:00" lists, oldest first, only "app/main.py, app/util.py, docs/budget.md"
    And every store's timeline after "2024-03-01T12:00:00+00:00" until "2024-03-03T12:00:00+00:00" lists, oldest first, only "app/util.py"
    And every store's timeline after "2024-03-02T13:00:00+01:00" lists, oldest first, only "docs/budget.md"
    And every store's timeline after "2024-03-03T12:00:00+00:00" lists nothing

  # -- vectors --------------------------------------------------------------------------

  Scenario: Vectors are added a batch at a time for every full text that lacks one
    Given every project is indexed
    When every store adds vectors of the space "words-8" for the first 2 texts it says lack one
    Then every store has vectors of "words-8" for 2 of its full texts, and lists the others as lacking one
    When every store adds vectors of the space "words-8" for every text it says lacks one
    Then every store has vectors of "words-8" for all of its full texts, and lists none as lacking one

  Scenario: The nearest texts come most similar first, within the filters and the limit
    Given every project is indexed
    And every store has vectors of the space "words-8" for every full text
    Then every store's nearest text to the vector of "uko://code/app/util.py#slug" is that text, with similarity 1
    And every store's nearest texts in paths "docs/*" are only from "docs/budget.md"
    And every store's nearest texts at every limit up to 8 are the first of its whole list, most similar first, ties by id
    And every store gives the similarity of each text to a vector, and none for a text it has no vector of

  Scenario: A writer for another space drops the old vectors; a store never mixes two spaces
    Given every project is indexed
    And every store has vectors of the space "words-8" for every full text
    When every store adds vectors of the space "other-8" for the first 1 texts it says lack one
    Then every store has no vectors of "words-8" to search
    And every store has vectors of "other-8" for 1 of its full texts, and lists the others as lacking one

  Scenario: A changed file needs vectors for its changed texts only
    Given every project is indexed
    And every store has vectors of the space "words-8" for every full text
    When every project has a file "app/util.py" containing:
      """
      def slug(text: str) -> str:
          return text.lower().replace(" ", "_")
      """
    And every project is indexed again
    Then every store lists exactly the full texts of "app/util.py" as lacking a vector of "words-8"

  # -- the store's life -----------------------------------------------------------------

  Scenario: Moving the index aside keeps it and starts the next index empty
    Given every project is indexed
    When every store moves its index aside
    Then every store said where its index went
    And every store offers no read capability
    And every store counts 0 files and 0 fragments
    And checking every store fails with StoreError saying "run `contextpipe index"
    When every store moves its index aside
    Then every store said it had nothing to move
    When every project is indexed
    Then every store counts 3 files and every fragment the index wrote

  Scenario: Reading a store ahead keeps to its limit and changes nothing
    # `Pipeline.warm_up` has the store read its files into the operating system's cache,
    # as far as memory allows, before a service's first request.
    Then every store reads 0 bytes ahead
    When every project is indexed
    Then every store reads ahead 4096 bytes when allowed that many, and all it keeps on this machine, the same each time, when allowed all
    And every store shows what it showed before reading ahead

  Scenario: Strategies read from worker threads and see what the caller sees
    Given every project is indexed
    When every store is closed
    Then every store answers searches, lookups, timelines and graph questions from 4 threads at once as from this one

  # -- memory, pins and sessions ----------------------------------------------------------

  Scenario: A session's memory reaches only that session's reads, whatever is asked
    Given every project is indexed
    When every store keeps the memory items:
      | id | text                                | scope   | owner | at                        |
      | a1 | The zebra keeps the ledger          | session | s-a   | 2024-03-04T12:00:00+00:00 |
      | b1 | The zebra hides the ledger          | session | s-b   | 2024-03-05T12:00:00+00:00 |
      | u1 | The zebra audits the ledger         | user    | u-1   | 2024-03-06T12:00:00+00:00 |
      | g1 | The zebra owns the ledger           | global  |       | 2024-03-07T12:00:00+00:00 |
    And every store has vectors of the space "words-8" for every full text
    Then in every store the searches, vector searches, timelines and tiers for "zebra ledger" see only this memory:
      | session | user | memory     |
      | s-a     |      | a1, g1     |
      | s-b     |      | b1, g1     |
      | s-b     | u-1  | b1, g1, u1 |
      |         |      | g1         |
    And in every store a search for "zebra" within 1 result as session "s-b" finds "b1" or "g1", never hidden memory
    # More of another session's items, each outranking both, kept after those searches
    # (more than a search reads past its cut): a store that remembers what is hidden must
    # not remember it from the former state.
    When every store keeps the memory items:
      | id  | text                                | scope   | owner | at                        |
      | a2  | Zebra, zebra: the zebra zebra 2     | session | s-a   | 2024-03-08T12:00:00+00:00 |
      | a3  | Zebra, zebra: the zebra zebra 3     | session | s-a   | 2024-03-09T12:00:00+00:00 |
      | a4  | Zebra, zebra: the zebra zebra 4     | session | s-a   | 2024-03-10T12:00:00+00:00 |
      | a5  | Zebra, zebra: the zebra zebra 5     | session | s-a   | 2024-03-11T12:00:00+00:00 |
      | a6  | Zebra, zebra: the zebra zebra 6     | session | s-a   | 2024-03-12T12:00:00+00:00 |
      | a7  | Zebra, zebra: the zebra zebra 7     | session | s-a   | 2024-03-13T12:00:00+00:00 |
      | a8  | Zebra, zebra: the zebra zebra 8     | session | s-a   | 2024-03-14T12:00:00+00:00 |
      | a9  | Zebra, zebra: the zebra zebra 9     | session | s-a   | 2024-03-15T12:00:00+00:00 |
      | a10 | Zebra, zebra: the zebra zebra 10    | session | s-a   | 2024-03-16T12:00:00+00:00 |
    Then in every store a search for "zebra" within 1 result as session "s-b" finds "b1" or "g1", never hidden memory
    And in every store the fragment lookups of the memory items see only this memory:
      | session | user | memory                                      |
      | s-a     |      | a1, a10, a2, a3, a4, a5, a6, a7, a8, a9, g1 |
      | s-b     | u-1  | b1, g1, u1                                  |
      |         |      | g1                                          |

  Scenario: Another scope's memory changes no keyword score a request is given
    # BM25's statistics counted every fragment: memory of another session holding a word
    # lowered the scores of the asking session's matches for it, which told the asking
    # session that someone else had said it.
    Given every project is indexed
    When every store keeps the memory items:
      | id | text                                 | scope   | owner | at                        |
      | b1 | The token budget of the ledger       | session | s-b   | 2024-03-04T12:00:00+00:00 |
    And every store notes the keyword scores session "s-b" is given for "token budget ledger" and for 'budget "the token budget"'
    And every store keeps the memory items:
      | id | text                                               | scope   | owner | at                        |
      | a1 | The ledger budget: token budget, token budget      | session | s-a   | 2024-03-05T12:00:00+00:00 |
      | a2 | Budget the ledger tokens, the token budget again   | session | s-a   | 2024-03-06T12:00:00+00:00 |
      | u1 | My ledger of the token budget                      | user    | u-1   | 2024-03-07T12:00:00+00:00 |
    Then every store gives session "s-b" the keyword scores it noted, to the bit

  Scenario: Memory is not a file: files and counts leave it out, and indexing again keeps it
    Given every project is indexed
    When every store keeps the memory items:
      | id | text                       | scope   | owner | at                        |
      | a1 | The zebra keeps the ledger | session | s-a   | 2024-03-04T12:00:00+00:00 |
    And every project is indexed again
    And every project forgets the folder "app"
    Then every store's writer gives back these files as they are on disk:
      | path           | skipped |
      | docs/budget.md |         |
    And in every store the searches, timelines and tiers for "zebra ledger" see only this memory:
      | session | user | memory |
      | s-a     |      | a1     |
    When every store forgets the memory of session "s-a"
    Then in every store the searches, timelines and tiers for "zebra ledger" see only this memory:
      | session | user | memory |
      | s-a     |      |        |
    And every store counts 1 file and as many fragments as its lookups hold

  Scenario: Pinned and named items are full texts in path order, within the filters
    Given every project is indexed
    When every store pins "app/*.py" and "uko://doc/docs/budget.md#leftovers"
    Then every store's pinned items are:
      | uri                                |
      | uko://code/app/main.py#module      |
      | uko://code/app/main.py             |
      | uko://code/app/main.py#run         |
      | uko://code/app/util.py#module      |
      | uko://code/app/util.py             |
      | uko://code/app/util.py#slug        |
      | uko://code/app/util.py#title       |
      | uko://doc/docs/budget.md#leftovers |
    And every store's pinned items of kinds "function" are:
      | uri                          |
      | uko://code/app/main.py#run   |
      | uko://code/app/util.py#slug  |
      | uko://code/app/util.py#title |
    When every store unpins "app/*.py"
    Then every store's pinned items are:
      | uri                                |
      | uko://doc/docs/budget.md#leftovers |
    When every store pins "app/util.py" and "uko://doc/docs/budget.md#leftovers"
    Then every store's pinned items are:
      | uri                                |
      | uko://code/app/util.py#module      |
      | uko://code/app/util.py             |
      | uko://code/app/util.py#slug        |
      | uko://code/app/util.py#title       |
      | uko://doc/docs/budget.md#leftovers |
    When "app/util.py" is deleted from every project
    And every project is indexed again
    Then every store's pinned items are:
      | uri                                |
      | uko://doc/docs/budget.md#leftovers |

  Scenario: The session log keeps each session's latest assemblies, latest first
    Given every project is indexed
    When every store logs for session "s-1" the assemblies:
      | uris                                                      |
      | uko://code/app/main.py#run                                |
      | uko://code/app/util.py#slug, uko://code/app/util.py#title |
      | uko://doc/docs/budget.md#leftovers                        |
      | uko://code/app/main.py#run                                |
    And every store logs for session "s-2" the assemblies:
      | uris                               |
      | uko://doc/docs/budget.md#leftovers |
    Then every store's recently used items of session "s-1" are:
      | uri                                |
      | uko://code/app/main.py#run         |
      | uko://doc/docs/budget.md#leftovers |
      | uko://code/app/util.py#slug        |
      | uko://code/app/util.py#title       |
    And every store's 3 most recently used items of session "s-1" are:
      | uri                                |
      | uko://code/app/main.py#run         |
      | uko://doc/docs/budget.md#leftovers |
      | uko://code/app/util.py#slug        |
    And every store's recently used items of session "s-2" are:
      | uri                                |
      | uko://doc/docs/budget.md#leftovers |
