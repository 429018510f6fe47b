"""tkgqa: question answering over temporal knowledge graphs."""

from .errors import (
    ConfigError,
    ContextWindowError,
    DataError,
    LLMError,
    NotFoundError,
    ParseError,
    RateLimitError,
    ReplayMiss,
    TKGQAError,
)

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "ContextWindowError",
    "DataError",
    "LLMError",
    "NotFoundError",
    "ParseError",
    "RateLimitError",
    "ReplayMiss",
    "TKGQAError",
    "__version__",
]
