import type { Metadata } from "next";
import { AccountView } from "@/components/account-view";
import { AuthGate } from "@/components/auth-gate";

export const metadata: Metadata = { title: "Account · Ragline" };

export default function AccountPage() {
  return (
    <AuthGate>
      <AccountView />
    </AuthGate>
  );
}
