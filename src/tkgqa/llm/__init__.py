"""The LLM layer: request/response types, backends (``openai:``, ``llamacpp:``, ``fake``), the SQLite
cache and run log, offline token counting and robust output parsing.

    llm = resolve_llm("llamacpp:smollm2")
    with llm_context(method="ari", question_id="q1"):
        answer = complete_parsed(llm, "Capital of France?", str.strip).value
"""

from .base import (
    LLM_BACKENDS,
    LLMBackend,
    LLMRequest,
    LLMResponse,
    Message,
    Usage,
    choice_instruction,
    complete_many,
    make_request,
    resolve_llm,
)
from .cache import (
    PRICES_PER_MTOK,
    CachedLLM,
    LLMCache,
    QuestionUsage,
    UsageSummary,
    current_llm_context,
    default_cache_path,
    llm_context,
    price_for,
    tkgqa_home,
    usage_summary,
)
from .llamacpp_backend import LlamaCppBackend, choice_grammar, smollm2_path
from .openai_backend import OpenAIBackend
from .parsing import (
    ParsedResponse,
    complete_parsed,
    extract_choice,
    extract_json,
    extract_json_list,
    extract_json_object,
    parse_string_list,
)
from .tokens import approx_tokens, count_message_tokens, count_tokens

__all__ = [
    "LLM_BACKENDS",
    "PRICES_PER_MTOK",
    "CachedLLM",
    "LLMBackend",
    "LLMCache",
    "LLMRequest",
    "LLMResponse",
    "LlamaCppBackend",
    "Message",
    "OpenAIBackend",
    "ParsedResponse",
    "QuestionUsage",
    "Usage",
    "UsageSummary",
    "approx_tokens",
    "choice_grammar",
    "choice_instruction",
    "complete_many",
    "complete_parsed",
    "count_message_tokens",
    "count_tokens",
    "current_llm_context",
    "default_cache_path",
    "extract_choice",
    "extract_json",
    "extract_json_list",
    "extract_json_object",
    "llm_context",
    "make_request",
    "parse_string_list",
    "price_for",
    "resolve_llm",
    "smollm2_path",
    "tkgqa_home",
    "usage_summary",
]
