import type { Metadata } from "next";
import { SignInView } from "@/components/sign-in-view";

export const metadata: Metadata = { title: "Sign in · Ragline" };

export default function SignInPage() {
  return <SignInView />;
}
