Feature: The strategies of one request share their searches
  In the default mix `simple-keyword` and `relevance` ask the text index for the query's
  best 50 hits, and `semantic-embedding` asks the vectors for the first 32 of the 50 nearest
  that `relevance` asks for. Within one request each such search is made once: a search
  for as many hits as one already made (or under way) for the same query and filters, or
  fewer, takes that one's first hits, which are exactly what it would have found. A search
  for more hits of the same question (a strategy's second page) reuses the first one's
  ranking and the texts it read. Nothing is shared between requests.

  Background:
    Given the setting "strategies.simple-keyword.enabled" is false
    And the setting "strategies.relevance.enabled" is false
    And the setting "strategies.semantic-embedding.enabled" is false
    And the sample documentation is indexed
    And the store's text searches are counted
    And strategies "first" and "second" that each propose the text index's best 5 hits for the query, and "third" its best 3

  Scenario: Three strategies asking the same question make one search
    When I ask for "how is the budget split between strategies?" within 2000 tokens
    Then the store's text index was searched 1 time
    And "first" and "second" were given the same hits, and "third" the first 3 of them

  Scenario: Nothing is shared between requests
    When I ask for "how is the budget split between strategies?" within 2000 tokens
    And I ask for "how is the budget split between strategies?" within 2000 tokens
    Then the store's text index was searched 2 times

  Scenario: A search for more hits than were found is made again
    Given a strategy "fourth" that proposes the text index's best 8 hits for the query
    When I ask for "how is the budget split between strategies?" within 2000 tokens
    Then the store's text index was searched at most 2 times
    And "first" and "second" were given the same hits, and "third" the first 3 of them

  Scenario: Asking again for more hits of the same question gives what a fresh search gives
    When the store is asked, in one request, for the best 2 hits and then the best 20 of each of these questions:
      | question                                    |
      | how is the budget split between strategies? |
      | which strategy proposes fragments           |
      | the packer fills the budget with leftovers  |
      | token budget of the context                 |
    Then each second answer is what a fresh search for as many hits gives, scores and terms alike
