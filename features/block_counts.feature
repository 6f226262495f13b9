Feature: The packer counts a block from its text's known count, exactly
  Acceptance counts every candidate's text; the packer then needs the count of the block
  the renderer makes of it (a header, the text, a closing line, the separator). It reuses
  the text's count and encodes only the header and the text's last lines, cutting at a line
  start that begins a new pre-tokenisation piece. The result must be the count of the whole
  block, to the token, for every output format, or the context could exceed its budget.

  Scenario Outline: Every block of <output> counted from its parts equals its count whole
    Given texts of every awkward shape: indented code, trailing spaces and line breaks, lines starting with "/" or punctuation, one line, empty lines, unicode
    When the packer counts each as a block of <output> output, knowing each text's count
    Then every count equals the count of the block and its separator, encoded whole
    And the texts' last lines were encoded instead of the whole text for at least 20 of them

    Examples:
      | output   |
      | markdown |
      | xml      |
      | messages |

  Scenario Outline: A block is counted from its text's last words, exactly, with <tokenizer>
    The packer cuts the text before its last space that follows a word: no piece of either
    encoding spans a character other than whitespace and the space after it.

    Given texts of every awkward shape: indented code, trailing spaces and line breaks, lines starting with "/" or punctuation, one line, empty lines, unicode
    When the packer counts each as a block of <output> output with <tokenizer>, knowing each text's count
    Then every count equals the count of the block and its separator, encoded whole
    And the texts' last words were encoded instead of their whole last line for at least 200 of them

    Examples:
      | output   | tokenizer   |
      | markdown | o200k_base  |
      | markdown | cl100k_base |
      | messages | cl100k_base |

  Scenario: JSON escapes the text, so its blocks are encoded whole, and counted exactly
    Given texts of every awkward shape: indented code, trailing spaces and line breaks, lines starting with "/" or punctuation, one line, empty lines, unicode
    When the packer counts each as a block of json output, knowing each text's count
    Then every count equals the count of the block and its separator, encoded whole
