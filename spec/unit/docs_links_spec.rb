# frozen_string_literal: true

require 'spec_helper'

# The README and the pages of docs/ link to files and to headings: each link
# must lead somewhere. A file must be one git tracks (what a release is made
# of), and a heading one the target has, by the anchor GitHub and the Forge
# make of it. Whether the README's targets are in the release itself is
# `make dist`'s check, against the tarball's listing.
describe 'the documentation links' do
  root = File.expand_path('../..', __dir__)
  tracked = Dir.chdir(root) { `git ls-files -z`.split("\0") }
  pages = ['README.md', 'CHANGELOG.md'] + tracked.grep(%r{\Adocs/.*\.md\z}).sort

  # GitHub's anchor of a heading: lower case, punctuation but `-` and `_`
  # dropped, each space a `-`.
  anchor_of = ->(heading) { heading.strip.downcase.gsub(%r{[^\p{Word}\- ]}, '').tr(' ', '-') }
  # A page's text outside fenced code blocks, where `](...)` is not a link.
  prose_of = ->(text) { text.gsub(%r{^```.*?^```}m, '') }
  anchors_of = lambda do |path|
    prose_of.call(File.read(File.join(root, path))).scan(%r{^#+ (.+)$}).flatten.map { |h| anchor_of.call(h) }
  end

  # The links of `text`, a page at `page`, that lead nowhere.
  dead_links = lambda do |page, text|
    dir = File.dirname(page)
    links = prose_of.call(text).scan(%r{\]\(([^)\s]+)\)}).flatten
    links.grep_v(%r{\A[a-z]+:}).reject do |link|
      path, anchor = link.split('#', 2)
      target = path.empty? ? page : File.expand_path(path, File.join('/', dir)).delete_prefix('/')
      exists = tracked.include?(target) || tracked.any? { |file| file.start_with?("#{target}/") }
      exists && (anchor.nil? || !target.end_with?('.md') || anchors_of.call(target).include?(anchor))
    end
  end

  it 'finds the pages, their headings and their links' do
    expect(pages).to include('README.md', 'docs/PROTOCOL.md', 'docs/DEVELOPMENT.md')
    expect(anchors_of.call('README.md')).to include('a-bare-include-clone_army-pe-console-hiera', 'security-model')
    expect(File.read(File.join(root, 'README.md')).scan('](').size).to be > 20
  end

  it 'finds a missing file, a missing heading and an untracked file, and skips code blocks' do
    text = <<~MD
      [a](docs/NOPE.md) [b](#no-such-heading) [c](docs/DEVELOPMENT.md#no-such-heading) [d](target/x)
      [e](#security-model) [f](docs/DEVELOPMENT.md#the-lab) [g](https://example.com/x) [h](manifests)
      ```
      [i](docs/IN-A-CODE-BLOCK.md)
      ```
    MD
    expect(dead_links.call('README.md', text))
      .to eq(['docs/NOPE.md', '#no-such-heading', 'docs/DEVELOPMENT.md#no-such-heading', 'target/x'])
    expect(dead_links.call('docs/X.md', '[a](../README.md#setup) [b](PROTOCOL.md) [c](README.md)')).to eq(['README.md'])
  end

  pages.each do |page|
    it "#{page} links only to tracked files and to headings they have" do
      expect(dead_links.call(page, File.read(File.join(root, page)))).to eq([])
    end
  end
end
