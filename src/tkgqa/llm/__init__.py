"""The LLM layer: request/response types, backends (``openai:``, ``llamacpp:``, ``fake``), the SQLite
cache and run log (versioned schema), the one cost rule (:func:`usage_cost`), the helpers methods share
(:func:`resolve_llm_arg`, :func:`usage_dict`, :func:`error_usage`, :func:`charge`), offline token counting
and robust output parsing.

    llm = resolve_llm("llamacpp:smollm2")
    with llm_context(method="ari", question_id="q1"):
        answer = complete_parsed(llm, "Capital of France?", str.strip).value
"""

from typing import TYPE_CHECKING

from ..credentials import SECRET_FIELDS
from ..lazy import lazy_exports
from ..usage import AnswerUsage, Usage
from .base import (
    LLM_BACKENDS,
    LLMBackend,
    LLMRequest,
    LLMResponse,
    Message,
    choice_instruction,
    complete_many,
    make_request,
)
from .cache import (
    CachedLLM,
    LLMCache,
    current_llm_context,
    default_cache_path,
    llm_context,
    resolve_llm,
    tkgqa_home,
)
from .helpers import (
    USAGE_KEYS,
    answer_usage,
    charge,
    error_usage,
    error_usage_dict,
    resolve_llm_arg,
    usage_dict,
)
from .parsing import (
    ListForm,
    ListReading,
    ParsedResponse,
    complete_parsed,
    extract_choice,
    extract_json,
    extract_json_list,
    extract_json_object,
    parse_answer_list,
    parse_string_list,
    read_answer_list,
    read_list,
)
from .pricing import LOCAL_BACKENDS, PRICES_PER_MTOK, load_price_table, price_for, usage_cost
from .schema import SCHEMA_VERSION
from .summary import LogSummary, QuestionUsage, UsageSummary, summarize_log, usage_summary
from .tokens import approx_tokens, count_message_tokens, count_tokens

if TYPE_CHECKING:
    from .llamacpp_backend import LlamaCppBackend, choice_grammar, smollm2_path
    from .openai_backend import OpenAIBackend

#: Names exported from the backend modules, imported on first access (``LLM_BACKENDS`` lists the backends
#: without importing them).
_LAZY = {
    "LlamaCppBackend": ".llamacpp_backend",
    "choice_grammar": ".llamacpp_backend",
    "smollm2_path": ".llamacpp_backend",
    "OpenAIBackend": ".openai_backend",
}
__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "LLM_BACKENDS",
    "LOCAL_BACKENDS",
    "PRICES_PER_MTOK",
    "SCHEMA_VERSION",
    "SECRET_FIELDS",
    "USAGE_KEYS",
    "AnswerUsage",
    "CachedLLM",
    "LLMBackend",
    "LLMCache",
    "LLMRequest",
    "LLMResponse",
    "ListForm",
    "ListReading",
    "LlamaCppBackend",
    "LogSummary",
    "Message",
    "OpenAIBackend",
    "ParsedResponse",
    "QuestionUsage",
    "Usage",
    "UsageSummary",
    "answer_usage",
    "approx_tokens",
    "charge",
    "choice_grammar",
    "choice_instruction",
    "complete_many",
    "complete_parsed",
    "count_message_tokens",
    "count_tokens",
    "current_llm_context",
    "default_cache_path",
    "error_usage",
    "error_usage_dict",
    "extract_choice",
    "extract_json",
    "extract_json_list",
    "extract_json_object",
    "llm_context",
    "load_price_table",
    "make_request",
    "parse_answer_list",
    "parse_string_list",
    "price_for",
    "read_answer_list",
    "read_list",
    "resolve_llm",
    "resolve_llm_arg",
    "smollm2_path",
    "summarize_log",
    "tkgqa_home",
    "usage_cost",
    "usage_dict",
    "usage_summary",
]
