import { ChatApp } from "@/components/chat-app";

export default function ChatPage() {
  return <ChatApp />;
}
