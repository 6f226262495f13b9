Feature: Fusing what strategies propose and packing it into the budget
  Candidates from different strategies with the same text are merged and keep the
  provenance of every strategy that proposed that text; their scores are fused by weighted
  reciprocal-rank fusion (k = `fusion.rrf_k`, 5 by default). Different texts of the same place (one node, or
  overlapping lines of one file) stay apart, and only one of them enters the context. The packer then fills the budget: it suppresses
  near-duplicates, prefers diverse fragments (MMR), falls back to a shorter depth when the
  full text does not fit, says why it left each candidate out, and never emits more tokens
  than the budget.

  Scenario Outline: The fused score is the weighted reciprocal-rank sum (<case>)
    Given the setting "strategies.second.weight" is <weight>
    And the setting "fusion.rrf_k" is <k>
    And a strategy "first" that proposes:
      | fragment | path | lines | text                          |
      | x        | x.md | 1-5   | The allocator splits budgets. |
      | y        | y.md | 1-5   | Fusion keeps provenance.      |
    And a strategy "second" that proposes:
      | fragment | path | lines | text                          |
      | z        | z.md | 1-5   | Packing never exceeds budget. |
      | x        | x.md | 1-5   | The allocator splits budgets. |
    When I ask for "budgets" within 1000 tokens
    Then the fragment "x" has the fused score <score>
    And the fragment "x" was proposed by "first" at rank 1 and by "second" at rank 2
    And the context holds the fragments "x, z, y" in this order

    Examples:
      | case                  | weight | k  | score    |
      | equal weights         | 1.0    | 60 | 0.032522 |
      | second weighs double  | 2.0    | 60 | 0.048652 |
      | a smaller k           | 1.0    | 10 | 0.174242 |

  Scenario: A strategy's quality scales its vote
    Given a strategy "first" of quality 0.5 that proposes:
      | fragment | path | lines | text                          |
      | x        | x.md | 1-5   | The allocator splits budgets. |
    When I ask for "budgets" within 1000 tokens
    Then the fragment "x" has the fused score 0.083333

  Scenario: Items of equal fused score come in the order of their fragment ids
    # Three strategies of equal weight each propose one text first: equal scores. The
    # budget holds one of them; the other two are listed in dropped[] in fused order.
    Given a strategy "first" that proposes:
      | fragment | path | lines | text                                                   |
      | a        | a.md | 1-5   | The allocator splits the budget between strategies.    |
    And a strategy "second" that proposes:
      | fragment | path | lines | text                                                   |
      | b        | b.md | 1-5   | Fusion keeps the provenance of every strategy's vote.  |
    And a strategy "third" that proposes:
      | fragment | path | lines | text                                                   |
      | c        | c.md | 1-5   | Packing never emits more tokens than the budget holds. |
    When I ask for "budgets" within 30 tokens
    Then the context holds 1 fragment
    And the fragments of "a, b, c" left out are listed in dropped[] by their ids

  Scenario: A strategy that proposes one text twice counts once, at its best rank
    Given a strategy "first" that proposes:
      | fragment | path    | lines | text                          |
      | x        | x.md    | 1-5   | The allocator splits budgets. |
      | y        | y.md    | 1-5   | Fusion keeps provenance.      |
      | copy     | copy.md | 1-5   | The allocator splits budgets. |
    When I ask for "budgets" within 1000 tokens
    Then the fragment "x" has the fused score 0.166667
    And the fragment "x" was proposed by "first" at rank 1 only

  Scenario: A vote that only echoes a search another strategy runs counts only for what nobody else proposed
    Given a strategy "first" that proposes:
      | fragment | path | lines | text                          |
      | x        | x.md | 1-5   | The allocator splits budgets. |
    And a strategy "second" that echoes a search, proposing:
      | fragment | path | lines | text                          |
      | x        | x.md | 1-5   | The allocator splits budgets. |
      | y        | y.md | 1-5   | Fusion keeps provenance.      |
    When I ask for "budgets" within 1000 tokens
    Then the fragment "x" has the fused score 0.166667
    And the fragment "x" was proposed by "first" at rank 1 and by "second" at rank 1
    And the fragment "y" has the fused score 0.142857

  Scenario: Whatever the lists, an echo adds nothing to an item another strategy proposed
    When the fusion property test fuses 300 random sets of lists with echoes
    Then the property test saw items "proposed by echoes alone, with an echo that did not count, without echoes"

  Scenario: Another text for the same node is another fragment; one of them enters, credited only to its own strategy
    Given the setting "strategies.second.weight" is 2.0
    And a strategy "first" that proposes:
      | fragment | path | lines | text                                    |
      | x        | x.md | 1-5   | The allocator splits budgets.           |
    And a strategy "second" that proposes:
      | fragment | path | lines | text                                    |
      | x        | x.md | 1-5   | The allocator splits budgets by weight. |
    When I ask for "budgets" within 1000 tokens
    Then the context holds 1 fragment
    And the context holds "uko://doc/x.md#x" as "The allocator splits budgets by weight.", credited only to "second"
    And a candidate of the node of "x" is listed in dropped with a reason mentioning "same node as"

  Scenario: Overlapping lines of one file enter the context once, each credited only to its own strategy
    Given the setting "strategies.first.weight" is 2.0
    And a strategy "first" that proposes:
      | fragment | path      | lines | text                                              |
      | section  | budget.md | 1-10  | The allocator splits budgets between strategies.  |
    And a strategy "second" that proposes:
      | fragment | path      | lines | text                                   |
      | middle   | budget.md | 5-15  | Floors and caps bound every share.     |
    When I ask for "budgets" within 1000 tokens
    Then the context holds 1 fragment
    And the context holds "uko://doc/budget.md#section" as "The allocator splits budgets between strategies.", credited only to "first"
    And the fragment "middle" is dropped with a reason mentioning "overlaps lines 1-10 of budget.md"

  Scenario: Adjacent lines of one file are different fragments
    Given a strategy "first" that proposes:
      | fragment | path      | lines | text                                        |
      | section  | budget.md | 1-10  | The allocator splits budgets between strategies. |
    And a strategy "second" that proposes:
      | fragment | path      | lines | text                                   |
      | next     | budget.md | 11-15 | Floors and caps bound every share.     |
    When I ask for "budgets" within 1000 tokens
    Then the context holds 2 fragments

  Scenario: Equal text in two files is one fragment, with both strategies' provenance
    Given a strategy "first" that proposes:
      | fragment | path          | lines | text                              |
      | original | docs/guide.md | 1-3   | Budgets are split by weight.      |
    And a strategy "second" that proposes:
      | fragment | path          | lines | text                              |
      | copy     | site/guide.md | 40-42 | Budgets are split by weight.      |
    When I ask for "budgets" within 1000 tokens
    Then the context holds 1 fragment
    And the fragment "original" was proposed by "first" at rank 1 and by "second" at rank 1
    And the fragment "copy" is listed in dropped as the same text as "original"

  Scenario: A near-duplicate of a selected fragment is left out and says of which
    Given a strategy "first" that proposes:
      | fragment | path   | lines | text                                                                                    |
      | original | one.md | 1-3   | The budget allocator splits the usable budget between strategies by weight quality and confidence |
      | reworded | two.md | 1-3   | The budget allocator splits the usable budget between all strategies by weight quality and confidence |
    When I ask for "budgets" within 1000 tokens
    Then the context holds the fragment "original"
    And the fragment "reworded" is dropped as a duplicate of "original"

  Scenario Outline: Near-duplicates are told by their words, as `\w+` finds them in any script (<case>)
    Given the setting "packing.duplicate_threshold" is 0.5
    And a strategy "first" that proposes:
      | fragment | path   | lines | text     |
      | original | one.md | 1-3   | <first>  |
      | other    | two.md | 1-3   | <second> |
    When I ask for "budgets" within 1000 tokens
    Then the context holds the fragment "original"
    And the fragment "other" is dropped as a duplicate of "original" with similarity <similarity>

    Examples:
      | case                         | first                             | second                              | similarity |
      | case and punctuation         | Budget: split, then pack!         | budget split (then) pack            | 1.00       |
      | an underscore joins          | split_budget then pack the pool   | split budget then pack the pool     | 0.57       |
      | digits are letters           | v2 splits the token budget        | v splits the token budget           | 0.67       |
      | letters of any script        | Überschrift naïve déjà-vu budget  | überschrift NAÏVE déjà vu budget    | 1.00       |
      | a dash of another script     | naïve—split budget pool           | naïve split budget pool             | 1.00       |

  Scenario Outline: Diversity: with mmr_lambda <lambda> the context is ordered "<order>"
    Given the setting "packing.mmr_lambda" is <lambda>
    And a strategy "first" that proposes:
      | fragment | path     | lines | text                                                    |
      | budget   | a.md     | 1-3   | alpha beta gamma delta epsilon zeta eta theta iota kappa |
      | similar  | b.md     | 1-3   | alpha beta gamma delta epsilon zeta eta lambda mu nu     |
      | other    | c.md     | 1-3   | packing renders markdown headers with paths and lines    |
    When I ask for "budgets" within 1000 tokens
    Then the context holds the fragments "<order>" in this order

    Examples:
      | lambda | order                   |
      | 0.75   | budget, other, similar  |
      | 1.0    | budget, similar, other  |

  Scenario: A request sets its own mmr_lambda, over the configured one
    Given the setting "packing.mmr_lambda" is 1.0
    And a strategy "first" that proposes:
      | fragment | path     | lines | text                                                    |
      | budget   | a.md     | 1-3   | alpha beta gamma delta epsilon zeta eta theta iota kappa |
      | similar  | b.md     | 1-3   | alpha beta gamma delta epsilon zeta eta lambda mu nu     |
      | other    | c.md     | 1-3   | packing renders markdown headers with paths and lines    |
    When I ask for "budgets" within 1000 tokens with an mmr_lambda of 0.75
    Then the context holds the fragments "budget, other, similar" in this order

  Scenario: Fragments scored below packing.min_score are left out as below threshold
    Given the setting "packing.min_score" is 0.15
    And a strategy "first" that proposes:
      | fragment | path | lines | text                          |
      | x        | x.md | 1-5   | The allocator splits budgets. |
      | y        | y.md | 1-5   | Fusion keeps provenance.      |
    When I ask for "budgets" within 1000 tokens
    Then the context holds the fragment "x"
    And the fragment "y" is dropped with a reason mentioning "below threshold"

  Scenario: Fragments that do not fit are left out because of the budget
    Given the sample documentation is indexed
    And a strategy "bulky" that proposes 3 fragments of about 35 tokens each
    When I ask for "bulky" within 120 tokens using only the strategy "bulky"
    Then the context holds the fragment "bulky-0"
    And the fragment "bulky-2" is dropped with a reason mentioning "budget"
    And the context uses at most the budget

  Scenario: A context that fills the budget to the last token is still packed
    Given a strategy "first" that proposes:
      | fragment | path | lines | text                          |
      | x        | x.md | 1-5   | The allocator splits budgets. |
      | y        | y.md | 1-5   | Fusion keeps provenance.      |
    When I ask for "budgets" within 1000 tokens
    And I ask for "budgets" within exactly the tokens its context took
    Then the context holds the fragments "x, y" in this order
    And the context uses the whole budget

  Scenario: Packing stops once only a sliver of the budget is left, and says so
    Given the setting "packing.stop_share" is 0.9
    And the setting "packing.stop_tokens" is 100
    And the sample documentation is indexed
    And a strategy "bulky" that proposes 3 fragments of about 35 tokens each
    When I ask for "bulky" within 120 tokens using only the strategy "bulky"
    Then the context holds 1 fragment
    And the fragment "bulky-1" is dropped with a reason mentioning "packing stops with under 100 tokens left"
    And the fragment "bulky-2" is dropped with a reason mentioning "packing stops with under 100 tokens left"

  Scenario: When the full text does not fit, a one-line listing of the node takes its place
    Given a file "docs/packing.md" containing:
      """
      # Packing

      The packer fills the budget.

      ## Knapsack

      The packer uses knapsack selection over detail depths.
      Knapsack selection chooses one depth for every node so that the context fits the budget.
      Knapsack selection chooses one depth for every node so that the context fits the budget.
      Knapsack selection chooses one depth for every node so that the context fits the budget.
      Knapsack selection chooses one depth for every node so that the context fits the budget.
      """
    And the project is indexed
    When I ask for "knapsack" within 2 tokens more than the full text of "uko://doc/docs/packing.md#knapsack"
    Then the context holds "uko://doc/docs/packing.md#knapsack" at depth 4 as "## Knapsack\nThe packer uses knapsack selection over detail depths."
    And the context uses at most the budget

  Scenario: A shallower depth competes at its lower value, after a full text worth more
    # The knapsack section does not fit in full after the budgets one; its skeleton is worth
    # 0.6 of it (depth_value_skeleton), less than the short stop section, which comes first.
    Given a file "docs/packing.md" containing:
      """
      # Packing

      ## Budgets

      The allocator splits the budget between strategies by weight, quality and confidence.

      ## Knapsack

      The packer uses knapsack selection over detail depths, one depth for every node.
      Knapsack selection chooses one depth for every node so that the context fits the budget.
      Knapsack selection chooses one depth for every node so that the context fits the budget.
      Knapsack selection chooses one depth for every node so that the context fits the budget.

      ## Stop

      Packing stops at a sliver.
      """
    And the project is indexed
    And a strategy "stored" that proposes the stored texts of "uko://doc/docs/packing.md#budgets, uko://doc/docs/packing.md#knapsack, uko://doc/docs/packing.md#stop", best first
    When I ask for "packing" within the output's frame and the tokens of "budgets, knapsack, stop", using only the strategy "stored"
    Then the context holds the fragments "budgets, stop, knapsack" in this order
    And the context holds "uko://doc/docs/packing.md#knapsack" at depth 4 as "## Knapsack\nThe packer uses knapsack selection over detail depths, one depth for every node."

  Scenario: Whatever the fragments, budget and format, the output never exceeds the budget
    Given the sample documentation is indexed
    And a strategy "random" that proposes what the property test generates
    When the property test assembles 250 random requests
    Then no rendered output was longer than its budget
    And each context's tokens_used was the exact token count of its rendered output
    And a BudgetError only came when the budget could not hold the output's fixed frame
    And every output format and tokenizer was tried
    And some contexts fell back to a shorter depth and some left candidates out
