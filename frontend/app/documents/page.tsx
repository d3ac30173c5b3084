import type { Metadata } from "next";
import { AuthGate } from "@/components/auth-gate";
import { DocumentsView } from "@/components/documents-view";

export const metadata: Metadata = { title: "Documents · Ragline" };

export default function DocumentsPage() {
  return (
    <AuthGate>
      <DocumentsView />
    </AuthGate>
  );
}
