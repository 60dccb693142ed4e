import { render } from 'preact';
import { App } from './app';
import { interceptLinks } from './hooks';
import './style.css';

interceptLinks();
render(<App />, document.getElementById('app')!);
