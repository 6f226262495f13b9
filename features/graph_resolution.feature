Feature: The graph stays resolved as the index changes
  A store keeps what each declared edge resolves to, so that `graph stats` and a walk in a
  new process read the graph instead of resolving it again. A change to the index resolves
  again only what it can have changed. Whatever the changes, and whether or not a write
  session is killed halfway, what the store reads back is the graph of resolving
  everything at once.

  Scenario: Random changes to random code bases never leave a stale graph
    When the property test changes random code bases in 60 runs
    Then every session's stored graph was the graph of everything resolved at once
    And some sessions were killed halfway and the next one caught up
