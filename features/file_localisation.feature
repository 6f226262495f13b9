Feature: File localisation measured on a repository's history
  `contextpipe eval fileloc TASKS --repo GIT` checks out each task's base commit in turn into
  one work folder, indexes it incrementally, assembles the task's query as a code question
  and ranks the files of the context by their best fragment. Acc@k is the share of tasks
  whose files to change are all among the first k files, for the default mix and for each
  strategy alone.

  Background: a shop in a git repository: pricing first, refunds in a second commit
    Given a git repository "repo" whose first commit holds:
      | path             | text                                                                   |
      | shop/pricing.py  | def apply_discount(total, percent):\n    return total * (100 - percent) // 100\n |
      | shop/checkout.py | from .pricing import apply_discount\n\n\ndef checkout(total):\n    return apply_discount(total, 10)\n |
    And its second commit adds:
      | path             | text                                                                   |
      | shop/refunds.py  | def refund_order(total):\n    return -total\n                          |
    And the setting "embedding.enabled" is false

  Scenario: Each task is asked at its own commit; Acc@k for the mix and each strategy
    Given the fileloc tasks:
      | id | base   | query                                | gold_files      |
      | t1 | first  | Round `apply_discount` down          | shop/pricing.py |
      | t2 | second | `refund_order` gives the wrong sign  | shop/refunds.py |
      | t3 | second | Ledgers lose entries                 | shop/ledger.py  |
    When the file localisation of the tasks is measured
    Then Acc@1, Acc@3, Acc@5 and Acc@10 of the default mix are 0.6667
    And Acc@1 of "breadth-depth-navigator" alone is 0.6667
    And Acc@1 of "simple-keyword" alone is 0.6667
    And the index time per task is measured

  Scenario: A task whose base is not in the repository names the task
    Given the fileloc tasks:
      | id | base             | query | gold_files      |
      | t9 | 0123456789abcdef | q     | shop/pricing.py |
    When the file localisation of the tasks is measured
    Then the measurement fails saying "task t9: base 0123456789abcdef"

  Scenario: A task line without its files to change names the file, line and key
    Given a tasks file "bad.jsonl" holding {"id": "x", "base": "HEAD", "query": "q"}
    When the tasks of "bad.jsonl" are read
    Then the measurement fails saying "bad.jsonl:1: \"gold_files\" must be a non-empty list of paths"
