import { AuthGate } from "@/components/auth-gate";
import { ChatApp } from "@/components/chat-app";

export default function ChatPage() {
  return (
    <AuthGate>
      <ChatApp />
    </AuthGate>
  );
}
