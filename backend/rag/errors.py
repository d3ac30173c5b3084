"""The error every ingestion step raises for a document it cannot take, with the HTTP status to answer."""


class DocumentError(ValueError):
    """A document that cannot be ingested; `status` is the HTTP status to answer with (413, 415 or 422)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
