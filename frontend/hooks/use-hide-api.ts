"use client";
/** Whether conversations held through /v1 (Open WebUI, scripts) are hidden from the thread list, in this browser. */
import { useEffect, useState } from "react";

const HIDE_API_KEY = "ragline.hideApiThreads";

/** Whether conversations held through /v1 (Open WebUI, scripts) are hidden from the list, kept in this browser. */
export function useHideApi(): [boolean, (hide: boolean) => void] {
  const [hide, setHide] = useState(false);
  useEffect(() => setHide(localStorage.getItem(HIDE_API_KEY) === "1"), []);
  return [
    hide,
    (value: boolean) => {
      setHide(value);
      localStorage.setItem(HIDE_API_KEY, value ? "1" : "0");
    },
  ];
}
