# frozen_string_literal: true

require 'spec_helper'
require 'json'

# examples/grafana-dashboard.json reads the node_exporter textfile that
# `clone-army report --format prometheus` writes: every metric and label its
# queries name must be one the helper writes (its Prometheus output, as the
# helper's own snapshot test holds it), or `instance`, which the scrape adds.
describe 'examples/grafana-dashboard.json' do
  root = File.expand_path('../..', __dir__)
  dashboard = JSON.parse(File.read(File.join(root, 'examples/grafana-dashboard.json')))
  exposition = File.read(File.join(root, 'helper/src/report/snapshots/clone_army__report__tests__prometheus_snapshot.snap'))
  # metric name => the labels its samples carry in the helper's output
  written = Hash.new { |h, k| h[k] = [] }
  exposition.scan(%r{^(clone_army_\w+)(?:\{([^\}]*)\})? }) do |name, labels|
    written[name] |= (labels || '').scan(%r{(\w+)="}).flatten
  end
  # A family with no sample in the snapshot (a figure no clone there has) is
  # still written, with its # TYPE line.
  exposition.scan(%r{^# TYPE (clone_army_\w+) }) { |(name)| written[name] |= [] }
  panels = dashboard['panels']
  queries = panels.flat_map { |panel| panel.fetch('targets', []) }

  it 'is read against the helper\'s output, which is not empty' do
    expect(written.keys).to include('clone_army_fleet_clones', 'clone_army_server_free_jrubies', 'clone_army_puppetdb_queue_depth')
  end

  it 'asks only for metrics the helper writes' do
    names = queries.flat_map { |q| q['expr'].scan(%r{\bclone_army_\w+}) }.uniq
    expect(names.size).to be > 15
    expect(names - written.keys).to eq([])
  end

  it 'uses only labels those metrics carry (or instance, from the scrape)' do
    wrong = queries.flat_map do |q|
      carried = q['expr'].scan(%r{\bclone_army_\w+}).flat_map { |name| written[name] } + ['instance']
      used = q['expr'].scan(%r{\bby \(([^)]*)\)}).flatten.flat_map { |list| list.split(%r{,\s*}) }
      used += q['expr'].scan(%r{[\{,](\w+)(?:=~|=)"}).flatten
      used += q['legendFormat'].to_s.scan(%r{\{\{(\w+)\}\}}).flatten
      (used.uniq - carried).map { |label| "#{q['expr']}: #{label}" }
    end
    expect(wrong).to eq([])
  end

  it 'takes its Prometheus and load hosts from variables, the hosts from a metric the helper writes' do
    variables = dashboard['templating']['list'].to_h { |v| [v['name'], v] }
    expect(variables['datasource']).to include('type' => 'datasource', 'query' => 'prometheus')
    expect(variables['instance']['definition']).to eq('label_values(clone_army_fleet_clones, instance)')
    sources = (panels + queries).filter_map { |item| item['datasource'] }.uniq
    expect(sources).to eq([{ 'type' => 'prometheus', 'uid' => '${datasource}' }])
    expect(queries.map { |q| q['expr'] }).to all(include('instance=~"$instance"'))
  end

  it 'lays out panels with unique ids inside Grafana\'s 24 columns' do
    expect(panels.map { |p| p['id'] }.uniq.size).to eq(panels.size)
    expect(panels.map { |p| p['gridPos']['x'] + p['gridPos']['w'] }.max).to be <= 24
    expect(panels.reject { |p| p['type'] == 'row' }.map { |p| p['title'] }).to all(be_a(String).and(match(%r{\S})))
  end
end
