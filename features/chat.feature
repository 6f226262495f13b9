Feature: Chat requests: the caller's messages back, with context before them, inside the model's window
  A proxy hands contextpipe a model's conversation before it reaches the model
  (`Pipeline.assemble_chat`, `POST /v1/chat/assemble`). The context may take what the
  model's window leaves after the messages, their tool calls and tool definitions, and the
  output reserve, capped by the request's budget. It comes as one system message before
  the caller's messages, which come back unchanged and in order. Context assembly
  improves a request and never fails one: late, failed or without room, the caller gets
  its messages untouched and the reason.

  Background:
    Given the project config file:
      """
      [models."small-model"]
      window = 900
      tokenizer = "o200k_base"
      output_reserve = 100
      """
    And the sample documentation is indexed

  Scenario: The context goes before the caller's messages, which come back exactly as sent
    # What is looked up is the last user message (or the request's query).
    When I send the chat request:
      """
      {"model": "gpt-4o-2024-08-06", "budget": 400, "messages": [
        {"role": "system", "content": "You answer questions about contextpipe."},
        {"role": "user", "content": [{"type": "text", "text": "How is the token budget split?"}]},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call-1", "type": "function",
          "function": {"name": "search", "arguments": "{\"q\": \"budget\"}"}}]},
        {"role": "tool", "tool_call_id": "call-1", "content": "no results", "cache_control": {"type": "ephemeral"}},
        {"role": "user", "content": "And where do leftovers go?"}
      ]}
      """
    Then the chat answer is the injected context followed by the caller's messages, unchanged
    And the injected message starts with "Use the context below where it helps"
    And the injected context holds the fragment "Leftovers"
    And the chat metadata says no fallback, with the injected fragments' ids
    And the injected message takes the tokens the metadata says, within the budget

  Scenario: The model's window less the messages, the tools and the reserve is all the room there is
    When I send a "small-model" chat request whose user message is "budget split strategies" repeated 180 times
    Then the chat context's budget is the window less the messages, the reserve and its own message
    And the messages and the injected message together fit the window less the reserve
    And the chat metadata says it was truncated
    When I send the same chat request with a tool definition of the "search" tool
    Then the messages cost more and the budget is smaller by as much

  Scenario: A conversation that fills the window goes back untouched
    When I send a "small-model" chat request whose user message is "budget split strategies" repeated 300 times
    Then the chat answer is the caller's messages, unchanged, with fallback "no_room"

  Scenario: An unknown model needs a budget
    When I send the chat request:
      """
      {"model": "my-own-model", "messages": [{"role": "user", "content": "budget"}]}
      """
    Then the chat request fails with 'unknown model \'my-own-model\': give a budget, or add [models."my-own-model"] window = N to config.toml'
    When I send the chat request:
      """
      {"model": "my-own-model", "budget": 200, "messages": [{"role": "user", "content": "budget"}]}
      """
    Then the chat metadata says no fallback, with the injected fragments' ids
    And the chat metadata says the window is not known

  Scenario: A conversation without a question to look up is refused, naming what to give
    When I send the chat request:
      """
      {"model": "gpt-4o", "messages": [{"role": "assistant", "content": "Hello."}]}
      """
    Then the chat request fails with "messages: no user message with text to look up; give a query"

  Scenario: A request past its deadline gets its messages back at the deadline, and nothing is recorded as given
    Given the store's checks are held until released
    When I send a chat request about "budget" for session "s-1" with a deadline of 200 ms
    Then the chat answer is the caller's messages, unchanged, with fallback "deadline"
    When the store's checks are released and the late assembly has finished
    Then session "s-1" was given nothing lately
    When I send a chat request about "budget" for session "s-1" with a deadline of 60000 ms
    Then the chat metadata says no fallback, with the injected fragments' ids
    And session "s-1" was given the injected fragments lately

  Scenario: A damaged store leaves the messages untouched, with the reason
    Given the store's database is cut in half
    When I send a chat request about "budget" for session "s-1" with a deadline of 60000 ms
    Then the chat answer is the caller's messages, unchanged, with fallback "store_unavailable"

  Scenario: Any other failure leaves the messages untouched, with its type
    Given the store's checks fail with ValueError
    When I send a chat request about "budget" for session "s-1" with a deadline of 60000 ms
    Then the chat answer is the caller's messages, unchanged, with fallback "error:ValueError"

  Scenario: Chat requests leave nothing for a full collection
    # Each request's assembly once ran on a thread of its own, which opened the store's
    # connections anew and left them in reference cycles: a full collection's pause.
    When I send 5 chat requests about "budget" with the collector off
    Then the chat metadata says no fallback, with the injected fragments' ids
    And those requests left nothing in reference cycles

  Scenario: A request can give its own directive, or none
    When I send the chat request:
      """
      {"model": "gpt-4o", "directive": "", "messages": [{"role": "user", "content": "How is the budget split?"}]}
      """
    Then the chat metadata says no directive was injected
    And the injected message starts with "###"
