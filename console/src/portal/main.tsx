/** The customer portal's entry: the session's token taken from the url (and the url cleaned), then the page. */
import { render } from 'preact';
import '../style.css';
import './portal.css';
import { App } from './app';
import { takeSession } from './session';

// A link opened again in this tab differs from the address only by its fragment, which changes no document: the
// page starts afresh with that link's token.
addEventListener('hashchange', () => {
  if (location.hash.length > 1) location.reload();
});
render(<App portal={takeSession()} />, document.getElementById('app')!);
