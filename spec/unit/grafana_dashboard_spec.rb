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
  # A p95 is written only over 20 values or more, which the snapshot's fleets
  # have not: it carries the labels of the p50 beside it.
  written.keys.grep(%r{_p95_seconds$}).each do |name|
    written[name] |= written.fetch(name.sub(%r{_p95_seconds$}, '_p50_seconds'), [])
  end
  # metric name => its # TYPE (gauge, counter)
  types = exposition.scan(%r{^# TYPE (clone_army_\w+) (\w+)$}).to_h
  # Grafana's unit ids the panels may use: one per panel, for what its series measure.
  units = ['s', 'short', 'none', 'ops', 'opm', 'percent', 'percentunit', 'bytes']
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

  it 'reads the helper\'s counters, and only those, through rate() or increase()' do
    counters = types.select { |_, type| type == 'counter' }.keys
    expect(counters).to include('clone_army_server_compiles_total', 'clone_army_puppetdb_commands_processed_total')
    expect(counters).to all(end_with('_total'))
    misread = queries.flat_map do |q|
      q['expr'].to_enum(:scan, %r{\b(clone_army_\w+)}).map do
        name = Regexp.last_match(1)
        through_rate = q['expr'][0...Regexp.last_match.begin(0)].match?(%r{\b(?:rate|increase)\($})
        next if counters.include?(name) == through_rate

        "#{q['expr']}: #{name} is a #{types[name]}"
      end.compact
    end
    expect(misread).to eq([])
    expect(queries.map { |q| q['expr'] }).to all(satisfy { |expr| !expr.match?(%r{\b(?:deriv|irate)\(}) })
  end

  it 'gives every panel one unit for what its series measure' do
    graphs = panels.reject { |p| p['type'] == 'row' }
    expect(graphs.map { |p| [p['title'], p.dig('fieldConfig', 'defaults', 'unit')] }).to all(satisfy { |_, unit| units.include?(unit) })
    expect(graphs.flat_map { |p| p.dig('fieldConfig', 'overrides') || [] }).to eq([])
    seconds = graphs.select { |p| p.dig('fieldConfig', 'defaults', 'unit') == 's' }
    expect(seconds.flat_map { |p| p['targets'] }.map { |q| q['expr'] }).to all(match(%r{_seconds\{}))
    rates = graphs.select { |p| p.dig('fieldConfig', 'defaults', 'unit') == 'ops' }
    expect(rates.flat_map { |p| p['targets'] }.map { |q| q['expr'] }).to all(match(%r{\brate\(}))
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
