"""Reading text the same way everywhere: the words and terms of a query or a fragment
(`words`), and counting its tokens with the configured tokenizer (`tokens`).
"""
