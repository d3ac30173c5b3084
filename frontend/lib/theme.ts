/** Theme storage key and the boot script the layout inlines so a stored dark theme never flashes light. */
export const THEME_KEY = "ragline-theme";

export const THEME_BOOT_SCRIPT = `try{var t=localStorage.getItem("${THEME_KEY}");if(t==="light"||t==="dark")document.documentElement.dataset.theme=t}catch(e){}`;
