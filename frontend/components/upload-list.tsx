/**
 * The documents page's recent uploads: a progress bar a batch, then what became of it, file by file: a refused file
 * with its reason, styled as an error, the accepted ones as accepted. The batch is an error only when nothing in it
 * was accepted.
 */
import type { UploadResult } from "@/lib/uploads";

export interface Upload {
  key: number;
  names: string;
  progress: number;
  /** Unset while the files are on their way. */
  result?: UploadResult;
}

export function UploadList({ uploads }: { uploads: Upload[] }) {
  if (uploads.length === 0) return null;
  return (
    <ul className="uploads" aria-label="Uploads">
      {uploads.map((u) => (
        <li
          key={u.key}
          className={`upload upload-${u.result?.state ?? "uploading"}`}
          data-state={u.result?.state ?? "uploading"}
        >
          <span className="upload-name">{u.names}</span>
          <progress max={1} value={u.progress} aria-label={`Upload progress of ${u.names}`} />
          {u.result ? (
            <UploadResultView result={u.result} />
          ) : (
            <span className="upload-message">{Math.round(u.progress * 100)}%</span>
          )}
        </li>
      ))}
    </ul>
  );
}

function UploadResultView({ result }: { result: UploadResult }) {
  // one file, accepted: the summary says it all
  const perFile = result.files.length > 1 || result.state !== "accepted";
  return (
    <div className="upload-result" role={result.state === "failed" ? "alert" : "status"}>
      <span className="upload-message">{result.summary}</span>
      {perFile && result.files.length > 0 && (
        <ul className="upload-files">
          {result.files.map((f, i) => (
            <li
              key={i}
              className="upload-file"
              data-accepted={f.accepted || undefined}
              data-refused={!f.accepted || undefined}
            >
              <strong>{f.name}</strong>
              {f.text}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
