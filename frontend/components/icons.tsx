/** Inline SVG icons (no icon font or emoji font needed). */
const common = {
  width: 16,
  height: 16,
  viewBox: "0 0 24 24",
  fill: "none",
  stroke: "currentColor",
  strokeWidth: 2,
  strokeLinecap: "round" as const,
  strokeLinejoin: "round" as const,
  "aria-hidden": true,
};

export const PencilIcon = () => (
  <svg {...common}>
    <path d="M12 20h9" />
    <path d="M16.5 3.5a2.1 2.1 0 0 1 3 3L7 19l-4 1 1-4z" />
  </svg>
);

export const TrashIcon = () => (
  <svg {...common}>
    <path d="M3 6h18" />
    <path d="M8 6V4h8v2" />
    <path d="M19 6l-1 14H6L5 6" />
  </svg>
);

export const MenuIcon = () => (
  <svg {...common} width={20} height={20}>
    <path d="M3 6h18M3 12h18M3 18h18" />
  </svg>
);
