import type { Metadata } from "next";
import { AdminView } from "@/components/admin-view";
import { AuthGate } from "@/components/auth-gate";

export const metadata: Metadata = { title: "Admin · Ragline" };

export default function AdminPage() {
  return (
    <AuthGate>
      <AdminView />
    </AuthGate>
  );
}
