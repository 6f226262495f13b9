Feature: Finding the turns of a conversation that answer a question
  A question about a conversation is often answered by a turn that shares none of its
  words: the reply to a question asked in the conversation ("Any book for my flight?" -
  "You'd love The Name of the Wind"), or the speaker's next turn. So a remembered turn is
  also searched by the words of the turn before it (`[memory] searched_neighbours`,
  searched but never shown), `relevance` brings the turns said right after its best memory
  hits along with them (`follow_ups`), and a question that names a speaker prefers what
  that speaker said (`speaker_bonus`) over what others said to them.

  Background: Anna and Ben talk about books, then about paint, days later
    Given a conversation file "chat.json" with the turns:
      | id   | speaker | time                 | text                                                      |
      | t1   | Anna    | 2024-05-07T10:00:00  | Can you recommend a fantasy novel for my flight, Ben?     |
      | t2   | Ben     | 2024-05-07T10:00:01  | The Name of the Wind by Patrick Rothfuss. You'll love it. |
      | t3   | Ben     | 2024-05-07T10:00:02  | I read it twice last winter, it made the dark days short. |
      | t4   | Anna    | 2024-05-07T10:00:03  | I repainted the kitchen walls in a deep blue yesterday.   |
      | t5   | Anna    | 2024-05-20T18:00:00  | Ben, thanks again for the novel, I finished it in a day.  |
      | t6   | Ben     | 2024-05-20T18:00:01  | Glad you liked it! I'm off hiking in the Alps next week.  |

  Scenario: An answer is found by the words of the question it answers, and shown as said
    When the conversation "chat.json" is imported for the user "anna"
    And I ask for "fantasy novel flight" within 1000 tokens as user "anna" using only the strategy "simple-keyword"
    Then the memory in the context includes the turn "t2"
    And the turn "t2" in the context reads "Ben: The Name of the Wind by Patrick Rothfuss. You'll love it."

  Scenario: Searched alone, a turn is found by its own words only
    Given the setting "memory.searched_neighbours" is "none"
    When the conversation "chat.json" is imported for the user "anna"
    And I ask for "fantasy novel flight" within 1000 tokens as user "anna" using only the strategy "simple-keyword"
    Then the memory in the context does not include the turn "t2"

  Scenario: Searched with both neighbours, a turn is also found by the words of the next one
    Given the setting "memory.searched_neighbours" is "both"
    When the conversation "chat.json" is imported for the user "anna"
    And I ask for "dark winter days" within 1000 tokens as user "anna" using only the strategy "simple-keyword"
    Then the memory in the context includes the turn "t2"

  Scenario: The best memory hit brings the turns said right after it, right behind it
    Given the setting "strategies.relevance.options.follow_ups" is 2
    And the setting "strategies.relevance.options.follow_up_hits" is 1
    And the setting "memory.searched_neighbours" is "none"
    When the conversation "chat.json" is imported for the user "anna"
    And the vectors are computed
    And I ask for "Which fantasy novel for the flight?" within 1000 tokens as user "anna" using only the strategy "relevance"
    Then the memory in the context starts with the turns "t1, t2, t3"
    And the reason of the turn "t2" from "relevance" mentions "said right after uko://memory/user/anna/t1"

  Scenario: Other memory said in between does not crowd out the turns that follow a hit
    # Global notes said between Anna's question and Ben's answer are seen by Anna's requests
    # too; with the request's own path filter the timeline read holds them all first.
    Given the setting "strategies.relevance.options.follow_ups" is 2
    And the setting "strategies.relevance.options.follow_up_hits" is 1
    And the setting "memory.searched_neighbours" is "none"
    And the memory items:
      | text                        | session | user | at                         |
      | Gate 1 of the depot opens   |         |      | 2024-05-07T10:00:00.100000 |
      | Gate 2 of the depot opens   |         |      | 2024-05-07T10:00:00.200000 |
      | Gate 3 of the depot opens   |         |      | 2024-05-07T10:00:00.300000 |
      | Gate 4 of the depot opens   |         |      | 2024-05-07T10:00:00.400000 |
      | Gate 5 of the depot opens   |         |      | 2024-05-07T10:00:00.500000 |
      | Gate 6 of the depot opens   |         |      | 2024-05-07T10:00:00.600000 |
      | Gate 7 of the depot opens   |         |      | 2024-05-07T10:00:00.700000 |
      | Gate 8 of the depot opens   |         |      | 2024-05-07T10:00:00.800000 |
      | Gate 9 of the depot opens   |         |      | 2024-05-07T10:00:00.900000 |
    When the conversation "chat.json" is imported for the user "anna"
    And the vectors are computed
    And I ask for "Which fantasy novel for the flight?" within 1000 tokens in the paths "uko://memory/*" as user "anna" using only the strategy "relevance"
    Then the memory in the context starts with the turns "t1, t2, t3"
    And the turns following "t1" are "t2, t3"

  Scenario: A turn said long after the hit does not follow it
    Given the setting "strategies.relevance.options.follow_ups" is 2
    And the setting "strategies.relevance.options.follow_up_hits" is 1
    And the setting "memory.searched_neighbours" is "none"
    When the conversation "chat.json" is imported for the user "anna"
    And the vectors are computed
    And I ask for "I repainted the kitchen walls blue" within 1000 tokens as user "anna" using only the strategy "relevance"
    Then the memory in the context starts with the turn "t4"
    And no reason from "relevance" mentions "said right after uko://memory/user/anna/t4"

  Scenario: A turn only the vector search found is scored for its words too
    # relevance pools the best keyword hits and the nearest vectors: a turn the vectors
    # brought in keeps its BM25 score for the words it holds ("novel"), never a made-up 0.
    Given the setting "strategies.relevance.options.pool_size" is 1
    And the setting "strategies.relevance.options.max_pool_size" is 1
    And the setting "strategies.relevance.options.follow_ups" is 0
    And the setting "memory.searched_neighbours" is "none"
    When the conversation "chat.json" is imported for the user "anna"
    And the vectors are computed
    And I ask for "a mountain walk holiday next week, and the novel" within 1000 tokens as user "anna" using only the strategy "relevance"
    Then the memory in the context starts with the turns "t6, t1"
    And no reason from "relevance" mentions "BM25 0.00"

  Scenario: Without follow-ups relevance ranks every turn by its own score
    Given the setting "strategies.relevance.options.follow_ups" is 0
    And the setting "memory.searched_neighbours" is "none"
    When the conversation "chat.json" is imported for the user "anna"
    And the vectors are computed
    And I ask for "Which fantasy novel for the flight?" within 1000 tokens as user "anna" using only the strategy "relevance"
    Then no reason from "relevance" mentions "said right after"

  Scenario Outline: A question naming a speaker prefers what that speaker said
    Given the setting "strategies.relevance.options.speaker_bonus" is <bonus>
    And the setting "strategies.relevance.options.follow_ups" is 0
    And the setting "memory.searched_neighbours" is "none"
    When the conversation "chat.json" is imported for the user "anna"
    And the vectors are computed
    And I ask for "What did Ben say about the novel?" within 1000 tokens as user "anna" using only the strategy "relevance"
    Then the first memory turn in the context is said by <first>

    Examples:
      | bonus | first |
      | 0.0   | Anna  |
      | 0.5   | Ben   |

  Scenario Outline: When the question names a speaker, only that speaker's turns follow a hit
    Given the setting "strategies.relevance.options.follow_ups" is 2
    And the setting "strategies.relevance.options.follow_up_hits" is 1
    And the setting "strategies.relevance.options.follow_named_speaker" is <named>
    And the setting "memory.searched_neighbours" is "none"
    When the conversation "chat.json" is imported for the user "anna"
    And the vectors are computed
    And I ask for "<question>" within 1000 tokens as user "anna" using only the strategy "relevance"
    Then the memory in the context starts with the turn "t1"
    And the turns following "t1" are "<following>"

    Examples:
      | named | question                                            | following |
      | false | What did Anna ask about a fantasy novel for flights? | t2, t3    |
      | true  | What did Anna ask about a fantasy novel for flights? | none      |
      | true  | Which fantasy novel for the flight?                  | t2, t3    |

  Scenario Outline: Short turns that cannot fill relevance's allocation draw a larger pool
    Given the setting "strategies.relevance.options.max_pool_size" is <most>
    And a conversation of 160 short turns about tea imported for the user "tea"
    And the vectors are computed
    When I ask for "tea" within 4000 tokens as user "tea" using only the strategy "relevance"
    Then "relevance" proposed <how many> 100 candidates

    Examples:
      | most | how many     |
      | 50   | at most      |
      | 300  | more than    |
