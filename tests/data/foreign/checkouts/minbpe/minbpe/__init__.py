"""Test stand-in for karpathy/minbpe, written for tokconf's tests (not upstream code)."""

from .base import Tokenizer
from .regex import RegexTokenizer
from .gpt4 import GPT4Tokenizer
