"""The data catalogue and the machinery behind ``tkgqa data``: fetch (resume, retries, blob-id checks),
import (files, folders, archives unpacked safely), verify, and where each dataset and recording is found."""

from .catalogue import Catalogue, Entry, Pin, catalogue, dataset_folder, read_catalogue, recording_path
from .store import MIRROR_ENV, Check, FetchOutcome, fetch_entry, import_path, presence, verify_entry
from .transfer import ChecksumError, DownloadError, TransferSettings, git_blob_id

__all__ = [
    "MIRROR_ENV",
    "Catalogue",
    "Check",
    "ChecksumError",
    "DownloadError",
    "Entry",
    "FetchOutcome",
    "Pin",
    "TransferSettings",
    "catalogue",
    "dataset_folder",
    "fetch_entry",
    "git_blob_id",
    "import_path",
    "presence",
    "read_catalogue",
    "recording_path",
    "verify_entry",
]
