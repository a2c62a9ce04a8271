/**
 * The main navigation. On a wide screen every page's link sits in the top bar (wrapping onto
 * another row when there are more than one row holds, so none is ever cut off); on a narrow
 * one they fold behind a Menu button and open as a list under the bar. Nothing here knows
 * which pages exist: the shell passes its routes, so a page added to them gets a link and a
 * place in the menu.
 *
 * The menu is a disclosure (a real button with aria-expanded): opening it moves focus to the
 * current page's link, arrow keys move between links, Escape closes it and returns focus to
 * the button, and clicking or tabbing away closes it.
 */
import { h } from './dom.js';

/** Below this width the links fold behind the Menu button. */
const NARROW = '(max-width: 760px)';

export interface MainNav {
  toggle: HTMLButtonElement;
  nav: HTMLElement;
  /** Mark the page shown (aria-current) and close the menu. */
  setCurrent(route: string): void;
  /** No views on the sign-in and waiting screens: nowhere to go. */
  setAvailable(available: boolean): void;
}

export function mainNav(entries: Array<[route: string, label: string]>, bar: HTMLElement): MainNav {
  const links = entries.map(([route, label]) => h('a', { href: `#/${route}`, 'data-route': route }, label));
  const nav = h(
    'nav',
    { id: 'main-nav', 'aria-label': 'Main', hidden: true },
    h(
      'ul',
      null,
      links.map((link) => h('li', null, link)),
    ),
  );
  const toggle = h(
    'button',
    {
      type: 'button',
      class: 'nav-toggle',
      'aria-controls': 'main-nav',
      'aria-expanded': 'false',
      hidden: true,
      onclick: () => setOpen(toggle.getAttribute('aria-expanded') !== 'true', true),
    },
    h('span', { class: 'burger', 'aria-hidden': 'true' }),
    'Menu',
  );

  function setOpen(open: boolean, moveFocus: boolean): void {
    toggle.setAttribute('aria-expanded', String(open));
    bar.classList.toggle('nav-open', open);
    if (open && moveFocus) (links.find((link) => link.hasAttribute('aria-current')) ?? links[0])?.focus();
  }

  function close(returnFocus: boolean): void {
    if (toggle.getAttribute('aria-expanded') !== 'true') return;
    setOpen(false, false);
    if (returnFocus) toggle.focus();
  }

  const narrow = window.matchMedia(NARROW);
  function fit(): void {
    if (nav.hidden) return;
    bar.classList.toggle('nav-collapsed', narrow.matches);
    toggle.hidden = !narrow.matches;
    if (!narrow.matches) setOpen(false, false);
  }
  narrow.addEventListener('change', fit);

  nav.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') return close(true);
    if (!bar.classList.contains('nav-collapsed')) return;
    const index = links.indexOf(document.activeElement as HTMLAnchorElement);
    const next =
      event.key === 'ArrowDown'
        ? links[(index + 1) % links.length]
        : event.key === 'ArrowUp'
          ? links[(index - 1 + links.length) % links.length]
          : event.key === 'Home'
            ? links[0]
            : event.key === 'End'
              ? links.at(-1)
              : undefined;
    if (next) {
      event.preventDefault();
      next.focus();
    }
  });
  toggle.addEventListener('keydown', (event) => event.key === 'Escape' && close(true));
  nav.addEventListener('click', (event) => {
    if ((event.target as Element).closest('a')) close(false);
  });
  // Leaving the menu (a click elsewhere, Tab past its last link) closes it.
  document.addEventListener('pointerdown', (event) => {
    const target = event.target as Node;
    if (!nav.contains(target) && !toggle.contains(target)) close(false);
  });
  nav.addEventListener('focusout', (event) => {
    const next = event.relatedTarget as Node | null;
    if (next && !nav.contains(next) && !toggle.contains(next)) close(false);
  });

  return {
    toggle,
    nav,
    setCurrent(route) {
      for (const link of links) {
        if (link.dataset.route === route) link.setAttribute('aria-current', 'page');
        else link.removeAttribute('aria-current');
      }
      close(false);
    },
    setAvailable(available) {
      nav.hidden = !available;
      if (!available) {
        close(false);
        toggle.hidden = true;
      } else fit();
    },
  };
}
